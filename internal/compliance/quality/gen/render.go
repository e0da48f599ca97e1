package main

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// An entity is one labelled span of a PII row, byte offsets into its text.
type entity struct {
	Type  string `json:"type"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// piiRow is one line of pii_*.jsonl.
type piiRow struct {
	Text     string   `json:"text"`
	Entities []entity `json:"entities"`
	Source   string   `json:"source"`
}

// A split is what tells the tune split's values from the held-out split's:
// each value family draws its shapes from its split's lists, and the lists
// differ (brands, countries, providers, separators, formats).
type split struct {
	name        string
	cardBrands  []string
	cardSeps    []string
	ibanCtry    []string
	phoneIntl   []string // regions written in international or E.164 format
	phoneNat    []string // regions also written in their national format
	phoneCustom bool     // US numbers also as 415.555.0123, +1-415-555-0123
	ssnSeps     []string
	emailShapes []func(r *rand.Rand, first, last string) string
	providers   []string
	awsTemp     bool // ASIA… temporary access keys too
	ipv6Comp    bool // IPv6 compressed ("::") rather than full
	dobFormats  []string
	firsts      []string
	lasts       []string
	keyKinds    []string
}

// A gen renders templates into rows for one split.
type gen struct {
	r *rand.Rand
	s *split
}

// render fills template t ("… {EMAIL} …") and returns the text with its
// entities. A placeholder is {NAME} or {NAME:arg}; see value for the names.
func (g *gen) render(t string) (string, []entity) {
	var b strings.Builder
	var ents []entity
	// one person per row unless the template asks for another ({PERSON2}).
	people := map[string][2]string{}
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			b.WriteString(t)
			break
		}
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			b.WriteString(t)
			break
		}
		tag := t[i+1 : i+j]
		if !isTag(tag) {
			// a literal brace (JSON, code): keep it and go on after it.
			b.WriteString(t[:i+1])
			t = t[i+1:]
			continue
		}
		b.WriteString(t[:i])
		t = t[i+j+1:]
		val, typ := g.value(tag, people)
		start := b.Len()
		b.WriteString(val)
		if typ != "" {
			ents = append(ents, entity{Type: typ, Start: start, End: b.Len()})
		}
	}
	return b.String(), ents
}

// isTag reports whether s is a placeholder's name: upper-case letters and
// digits, then optionally ":" and an argument without spaces or quotes.
func isTag(s string) bool {
	name, arg, _ := strings.Cut(s, ":")
	if name == "" || name[0] < 'A' || name[0] > 'Z' {
		return false
	}
	for _, c := range name {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return !strings.ContainsAny(arg, " \"{}\n")
}

// value is the text of placeholder tag and its entity type ("" for filler
// that is not PII).
func (g *gen) value(tag string, people map[string][2]string) (string, string) {
	r, s := g.r, g.s
	name, arg, _ := strings.Cut(tag, ":")
	person := func(slot string) [2]string {
		p, ok := people[slot]
		if !ok {
			p = [2]string{pick(r, s.firsts), pick(r, s.lasts)}
			people[slot] = p
		}
		return p
	}
	switch name {
	case "EMAIL", "EMAIL2":
		p := person("PERSON")
		if name == "EMAIL2" {
			p = person("PERSON2")
		}
		return pick(r, s.emailShapes)(r, p[0], p[1]), "EMAIL"
	case "PHONE":
		return g.phone(arg), "PHONE"
	case "SSN":
		sep := pick(r, s.ssnSeps)
		if arg != "" {
			sep = strings.Trim(arg, "'")
		}
		return ssn(r, sep), "SSN"
	case "CARD":
		br := brands[pick(r, s.cardBrands)]
		if arg != "" {
			br = brands[arg]
		}
		return cardNumber(r, br, pick(r, s.cardSeps)), "CREDIT_CARD"
	case "IBAN":
		c := pick(r, s.ibanCtry)
		if arg != "" && ibanFormats[arg] != "" {
			c = arg
		}
		return iban(r, c, r.IntN(2) == 0), "IBAN"
	case "IP":
		switch {
		case arg == "v6" || arg == "" && r.IntN(4) == 0:
			return ipv6(r, s.ipv6Comp && r.IntN(4) != 0), "IP_ADDRESS"
		case arg == "private" || arg == "" && r.IntN(3) == 0:
			return ipv4Private(r), "IP_ADDRESS"
		}
		return ipv4(r), "IP_ADDRESS"
	case "PERSON", "PERSON2", "PERSON3":
		p := person(name)
		return p[0] + " " + p[1], "PERSON"
	case "FIRST", "FIRST2":
		return person(strings.Replace(name, "FIRST", "PERSON", 1))[0], "PERSON"
	case "LAST", "LAST2":
		return person(strings.Replace(name, "LAST", "PERSON", 1))[1], "PERSON"
	case "KEY":
		p := pick(r, s.providers)
		if arg != "" {
			p = arg
		}
		mk, ok := apiKeys[p]
		if !ok {
			return "{" + tag + "}", "" // caught by TestTemplates
		}
		return mk(r), "API_KEY"
	case "AKID":
		return awsAccessKey(r, s.awsTemp && r.IntN(3) == 0), "AWS_ACCESS_KEY"
	case "AKSECRET":
		return awsSecretKey(r), "AWS_SECRET_KEY"
	case "PEM":
		return privateKey(r, pick(r, s.keyKinds)), "PRIVATE_KEY"
	case "JWT":
		return jwt(r, strings.ToLower(person("PERSON")[0])), "JWT"
	case "DBURL":
		return g.dbURL(arg), "DATABASE_URL"
	case "DOB":
		return dob(r, pick(r, s.dobFormats)), "DATE_OF_BIRTH"
	case "CITY":
		return pick(r, cities), ""
	case "COUNTRY":
		return pick(r, countries), ""
	case "ORG":
		return pick(r, orgs), ""
	case "NUM":
		// a small plain number: quantities, ticket numbers, amounts.
		return fmt.Sprint(2 + r.IntN(998)), ""
	case "AMOUNT":
		return fmt.Sprintf("%d.%02d", 10+r.IntN(4990), r.IntN(100)), ""
	case "HOST":
		return pick(r, hosts), ""
	}
	return "{" + tag + "}", ""
}

// phone is a number of a region of the split: arg "nat" forces a national
// format of a region written nationally, "intl" an international one.
func (g *gen) phone(arg string) string {
	r, s := g.r, g.s
	if arg != "intl" && (arg == "nat" || r.IntN(2) == 0) {
		region := pick(r, s.phoneNat)
		if s.phoneCustom && region == "US" && r.IntN(2) == 0 {
			n := phone(r, "US", phonenumbers.NATIONAL, false)
			d := onlyDigits(n)
			if r.IntN(2) == 0 {
				return d[:3] + "." + d[3:6] + "." + d[6:]
			}
			return "+1-" + d[:3] + "-" + d[3:6] + "-" + d[6:]
		}
		return phone(r, region, phonenumbers.NATIONAL, r.IntN(2) == 0)
	}
	f := phonenumbers.INTERNATIONAL
	if r.IntN(4) == 0 {
		f = phonenumbers.E164
	}
	return phone(r, pick(r, s.phoneIntl), f, r.IntN(2) == 0)
}

func onlyDigits(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c >= '0' && c <= '9' {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// dbURL is a connection string with a user and a password.
func (g *gen) dbURL(scheme string) string {
	r := g.r
	if scheme == "" {
		scheme = pick(r, []string{"postgres", "postgresql", "mysql", "mongodb", "redis", "amqp"})
	}
	port := map[string]int{"postgres": 5432, "postgresql": 5432, "mysql": 3306, "mongodb": 27017, "redis": 6379, "amqp": 5672, "mongodb+srv": 0, "sqlserver": 1433}[scheme]
	user := pick(r, []string{"app", "admin", "svc_reader", "etl", "billing", "root", "api_user", "report"})
	pass := randStr(r, alnum, 10+r.IntN(14))
	if r.IntN(3) == 0 {
		pass = pick(r, []string{"Summer2024!", "hunter2", "p4ssw0rd", "S3cure!Pass", "changeme123", "Tr0ub4dor&3"})
	}
	host := pick(r, hosts)
	db := pick(r, []string{"orders", "app", "analytics", "crm", "prod", "users", "0"})
	if port == 0 {
		return fmt.Sprintf("%s://%s:%s@%s/%s", scheme, user, pass, host, db)
	}
	return fmt.Sprintf("%s://%s:%s@%s:%d/%s", scheme, user, pass, host, port, db)
}

var months = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}

// dob is a birth date between 1940 and 2005 in format f.
func dob(r *rand.Rand, f string) string {
	y, m, d := 1940+r.IntN(66), 1+r.IntN(12), 1+r.IntN(28)
	switch f {
	case "iso":
		return fmt.Sprintf("%04d-%02d-%02d", y, m, d)
	case "us":
		return fmt.Sprintf("%02d/%02d/%04d", m, d, y)
	case "eu":
		return fmt.Sprintf("%02d/%02d/%04d", d, m, y)
	case "de":
		return fmt.Sprintf("%02d.%02d.%04d", d, m, y)
	case "long-us":
		return fmt.Sprintf("%s %d, %d", months[m-1], d, y)
	case "long-eu":
		return fmt.Sprintf("%d %s %d", d, months[m-1], y)
	}
	return fmt.Sprintf("%d %s %d", d, months[m-1][:3], y)
}

// Fillers: not PII, so never labelled.
var (
	cities    = []string{"Lisbon", "Denver", "Osaka", "Leeds", "Lyon", "Munich", "Valencia", "Toronto", "Austin", "Rotterdam", "Krakow", "Porto", "Seattle", "Dublin", "Zurich", "Nairobi", "Melbourne", "Bologna"}
	countries = []string{"Portugal", "Canada", "Japan", "Ireland", "Spain", "Mexico", "Norway", "Kenya", "Chile", "Poland", "Greece", "India", "Austria", "Brazil", "Italy", "Germany"}
	orgs      = []string{"Northwind Traders", "Contoso", "Fabrikam", "Acme Logistics", "Globex", "Initech", "Umbrella Health", "Tailspin Toys", "Wingtip Bank", "Blue Yonder Airlines", "Litware", "Adventure Works"}
	hosts     = []string{"db.internal", "prod-db-01.eu-west-1.rds.amazonaws.com", "mongo-primary.svc.cluster.local", "cache.prod.local", "pg.northwind.io", "mysql-replica-2", "analytics.contoso.net", "localhost", "db", "queue.fabrikam.internal"}
)
