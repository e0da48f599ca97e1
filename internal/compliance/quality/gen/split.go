package main

import (
	_ "embed"
	"math/rand/v2"
	"strings"
)

//go:embed firstnames.txt
var firstNamesTxt string

// surnames are common family names of many countries, written for this
// set (a family name is a fact, not a work).
var surnames = strings.Fields(`
Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez
Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark
Ramirez Lewis Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams
Nelson Baker Hall Rivera Campbell Mitchell Carter Roberts Mueller Schmidt Schneider Fischer Weber
Meyer Wagner Becker Schulz Hoffmann Koch Richter Klein Wolf Schroeder Neumann Schwarz Zimmermann
Braun Krueger Hofmann Hartmann Lange Werner Krause Lehmann Koehler Dubois Durand Lefebvre Moreau
Laurent Simon Michel Leroy Roux David Bertrand Morel Fournier Girard Bonnet Dupont Lambert Fontaine
Rousseau Vincent Muller Faure Andre Mercier Blanc Guerin Boyer Garnier Chevalier Fernandez Gomez
Diaz Ruiz Alonso Moreno Munoz Romero Navarro Dominguez Vazquez Ramos Gil Serrano Blanco Molina
Morales Suarez Ortega Delgado Castro Ortiz Rubio Marin Sanz Iglesias Nunez Medina Garrido Rossi
Russo Ferrari Esposito Bianchi Romano Colombo Ricci Marino Greco Bruno Gallo Conti Costa Giordano
Mancini Rizzo Lombardi Moretti Silva Santos Oliveira Souza Pereira Lima Carvalho Ribeiro Almeida
Nowak Kowalski Wisniewski Wojcik Kaminski Lewandowski Zielinski Jansen Visser Bakker Smit Meijer
Mulder Bos Vos Peters Hendriks Dekker Kumar Sharma Patel Singh Gupta Reddy Iyer Nair Das Rao
Tanaka Suzuki Takahashi Watanabe Ito Yamamoto Nakamura Kobayashi Kato Kim Park Choi Jung Kang Cho
Chen Wang Zhang Liu Yang Huang Zhao Zhou Wu Xu Sun Ma Hu Lin Okafor Mensah Adeyemi Mwangi Otieno
Haddad Nasser Khalil Hansen Johansson Nielsen Andersen Larsen Olsen Lindqvist Virtanen Korhonen
OBrien Murphy Kelly Walsh Byrne Ryan Novak Horvat Popescu Ionescu Papadopoulos Yilmaz Kaya Demir
`)

// names returns the first names and surnames whose index in their list
// has the given parity: the tune split and the held-out split share none.
func names(parity int) (firsts, lasts []string) {
	for i, n := range strings.Fields(firstNamesTxt) {
		if i%2 == parity {
			firsts = append(firsts, n)
		}
	}
	for i, n := range surnames {
		if i%2 == parity {
			lasts = append(lasts, n)
		}
	}
	return firsts, lasts
}

func lowerASCII(s string) string { return strings.ToLower(s) }

// tuneSplit and heldOutSplit are the two splits' value shapes. The held-out
// one adds card brands, IBAN countries, phone regions, key providers and
// formats the tune one never uses, so a detector fitted to the tune rows'
// values is found out.
func tuneSplit() *split {
	f, l := names(0)
	return &split{
		name:       "tune",
		cardBrands: []string{"visa", "visa", "mastercard", "mastercard", "amex", "discover"},
		cardSeps:   []string{"", " ", " "},
		ibanCtry:   []string{"DE", "GB", "FR", "ES", "IT", "NL", "BE", "AT", "CH", "PL", "SE", "DK", "NO", "FI", "IE", "PT", "LU", "CZ", "HU", "GR"},
		phoneIntl:  []string{"US", "GB", "DE", "FR", "ES", "IT", "NL", "IN", "BR", "AU", "JP", "CA", "MX", "SE", "PL"},
		phoneNat:   []string{"US", "US", "GB", "DE", "FR", "ES"},
		ssnSeps:    []string{"-"},
		emailShapes: []func(*rand.Rand, string, string) string{
			func(r *rand.Rand, f, l string) string { return lowerASCII(f+"."+l) + "@" + pick(r, tuneDomains) },
			func(r *rand.Rand, f, l string) string { return lowerASCII(f[:1]+l) + "@" + pick(r, tuneDomains) },
			func(r *rand.Rand, f, l string) string {
				return lowerASCII(f) + "+" + pick(r, []string{"news", "billing", "test", "work"}) + "@" + pick(r, tuneDomains)
			},
			func(r *rand.Rand, f, l string) string {
				return lowerASCII(f) + itoa(r.IntN(100)) + "@" + pick(r, freemail)
			},
		},
		providers:  []string{"openai", "anthropic", "github", "slack-bot", "stripe", "google", "gitlab", "huggingface"},
		ipv6Comp:   false,
		dobFormats: []string{"iso", "us", "long-us"},
		firsts:     f,
		lasts:      l,
		keyKinds:   []string{"RSA PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY"},
	}
}

func heldOutSplit() *split {
	f, l := names(1)
	return &split{
		name:        "heldout",
		cardBrands:  []string{"visa", "mastercard", "amex", "discover", "jcb", "diners", "unionpay", "maestro", "visa13"},
		cardSeps:    []string{"", " ", "-", "-"},
		ibanCtry:    []string{"DE", "GB", "FR", "ES", "IT", "NL", "RO", "BG", "HR", "SI", "SK", "EE", "LV", "LT", "MT", "CY", "IS", "LI", "MC", "TR", "SA", "AE", "IL", "QA", "BR", "KW", "UA", "RS", "AD", "GI"},
		phoneIntl:   []string{"US", "GB", "DE", "FR", "ES", "CH", "AT", "BE", "IE", "ZA", "SG", "NZ", "KR", "AR", "PT", "NO", "DK", "FI", "HK", "AE"},
		phoneNat:    []string{"US", "US", "GB", "DE", "FR", "ES", "IT", "NL"},
		phoneCustom: true,
		ssnSeps:     []string{"-", "-", " "},
		emailShapes: []func(*rand.Rand, string, string) string{
			func(r *rand.Rand, f, l string) string { return lowerASCII(f+"_"+l) + "@" + pick(r, heldOutDomains) },
			func(r *rand.Rand, f, l string) string {
				return f + "." + l + "@" + strings.ToUpper(pick(r, heldOutDomains)[:1]) + pick(r, heldOutDomains)[1:]
			},
			func(r *rand.Rand, f, l string) string {
				return lowerASCII(l+"-"+f[:1]) + "@mail." + pick(r, heldOutDomains)
			},
			func(r *rand.Rand, f, l string) string {
				return lowerASCII(f[:1]+"."+l) + itoa(1960+r.IntN(45)) + "@" + pick(r, freemail)
			},
			func(r *rand.Rand, f, l string) string {
				return pick(r, []string{"support", "billing", "hr", "it-helpdesk", "no-reply", "security"}) + "@" + pick(r, heldOutDomains)
			},
		},
		providers:  []string{"openai", "openai-legacy", "anthropic", "github", "github-fine", "github-oauth", "slack-bot", "slack-user", "stripe", "stripe-restricted", "google", "sendgrid", "npm"},
		awsTemp:    true,
		ipv6Comp:   true,
		dobFormats: []string{"iso", "eu", "de", "long-eu", "short"},
		firsts:     f,
		lasts:      l,
		keyKinds:   []string{"RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY"},
	}
}

var (
	tuneDomains    = []string{"northwind.com", "contoso.co.uk", "fabrikam.de", "acme-logistics.com", "globex.io", "initech.net", "umbrella-health.org", "tailspin.fr"}
	heldOutDomains = []string{"wingtipbank.com", "blueyonder.aero", "litware.dev", "adventure-works.es", "lucerne-publishing.ch", "proseware.co.jp", "woodgrove.bank", "alpineski.at", "coho-vineyard.com.au", "trey-research.ai"}
	freemail       = []string{"gmail.com", "outlook.com", "yahoo.com", "proton.me", "gmx.de", "hotmail.fr", "icloud.com"}
)

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
