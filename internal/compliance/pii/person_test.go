package pii

import (
	"testing"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

func TestPerson(t *testing.T) {
	runTable(t, detect.Person, []tcase{
		{"title", "Please ask Mr. John Smith to sign.", []string{"John Smith"}},
		{"title no dot", "Dr Anna Müller will see you", []string{"Anna Müller"}},
		{"title with initial", "Prof. J. R. Tolkien", []string{"J. R. Tolkien"}},
		{"dear", "Dear Siobhan O'Neill,\nthank you", []string{"Siobhan O'Neill"}},
		{"dear title", "Dear Mrs. Okafor,", []string{"Okafor"}},
		{"german greeting", "Sehr geehrte Frau Schmidt,", []string{"Schmidt"}},
		{"hi listed", "Hi John, the build is green", []string{"John"}},
		{"hi unlisted with comma", "Hi Jürgen, the build is green", []string{"Jürgen"}},
		{"my name is", "my name is Ludwig van Beethoven and I", []string{"Ludwig van Beethoven"}},
		{"i am full name", "I am Priya Raman from sales", []string{"Priya Raman"}},
		{"i'm listed", "I'm Anna.", []string{"Anna"}},
		{"call me", "call me Ishmael.", []string{"Ishmael"}},
		{"german intro", "Ich heiße Jörg Weber.", []string{"Jörg Weber"}},
		{"signature", "Regards,\nJohn Smith", []string{"John Smith"}},
		{"signature with title line", "Best regards,\nMaria Garcia\nHead of Sales", []string{"Maria Garcia"}},
		{"german signature", "Mit freundlichen Grüßen\nHans Meier", []string{"Hans Meier"}},
		{"thanks same line", "Can you fix it? Thanks, Anna", []string{"Anna"}},
		{"kind regards same line", "Kind regards, Tomasz Nowak, CFO", []string{"Tomasz Nowak"}},
		{"label colon", "Name: Zhang Wei\nDOB: 1990", []string{"Zhang Wei"}},
		{"role noun", "the customer Maria Gonzalez (maria@example.com) asked", []string{"Maria Gonzalez"}},
		{"account holder", "(account holder Sawyer Quinn)", []string{"Sawyer Quinn"}},
		{"verb at", "please call Jürgen at +49 30 901820", []string{"Jürgen"}},
		{"listed bare full name", "Yesterday Robert Kowalski approved it.", []string{"Robert Kowalski"}},
		{"signature line", "--\nWaly Thompson | Account Manager | +1 201-555-0100", []string{"Waly Thompson"}},
		{"who", "Write a reply to Edlin Vazquez who says it failed.", []string{"Edlin Vazquez"}},
		{"possessive", "my name is Anna Weber's", []string{"Anna Weber"}},

		{"hello world", "Hello World! This is my first program.", nil},
		{"dear sir", "Dear Sir or Madam,", nil},
		{"hi team", "Hi team, hi all,", nil},
		{"dear customer", "Dear Customer,\nyour order shipped.", nil},
		{"dear hiring manager", "Dear Hiring Manager,", nil},
		{"i am adjective", "I am Happy to help", nil},
		{"this is a product", "This is Google Cloud Storage.", nil},
		{"team signature", "Best,\nThe Acme Team", nil},
		{"thanks then sentence", "Thanks!\nGreat work everyone.", nil},
		{"support portal", "Customer Support Portal is down", nil},
		{"contact us", "Contact Us for details", nil},
		{"call support", "call Support at 555-0100", nil},
		{"regards department", "Regards,\nSales", nil},
		{"heading", "The Great Gatsby by Scott Fitzgerald Review", nil},
		{"month name", "Dear May,", nil},
		{"all caps acronym", "Hi IT, the VPN is down", nil},
		{"lower case after title", "Mr. smith", nil},
		{"sentence start", "Name the file carefully.", nil},
		{"places and products", "We moved from New York to San Francisco and now use Microsoft Teams, Amazon Web Services and Apache Kafka.", nil},
		{"holidays and fields", "On Black Friday the Data Science team met the Machine Learning group in Los Angeles.", nil},
		{"listed name as a place", "Our office in Beverly Hills and the store near Victoria Station.", nil},
		{"who after a product", "Ask Microsoft Teams who joined.", nil},
		{"product with a name", "Ask Siri or Alexa; open Jenkins Pipeline.", nil},
	})
}
