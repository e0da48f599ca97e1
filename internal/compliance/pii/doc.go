// Package pii detects personal data in text: EMAIL, PHONE (validated with
// nyaruka/phonenumbers), SSN, CREDIT_CARD (IIN ranges + Luhn), IBAN (country
// length + mod-97), IP_ADDRESS (v4, v6; netmask and version-string guards),
// PERSON (names supported by context), DATE_OF_BIRTH, PASSPORT and
// DRIVERS_LICENSE (only where a context word supports them). Each detector
// validates its candidates and weighs the words around them.
//
// It imports, of svc, only internal/compliance/detect.
package pii
