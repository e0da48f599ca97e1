package verify

import "strings"

// lang indexes the stopword profiles of the Latin-script languages Extract
// tells apart.
type lang uint8

const (
	langEN lang = iota
	langES
	langFR
	langDE
	langIT
	langPT
	langNL
	numLatinLangs
)

// latinLangCodes are the ISO 639-1 codes of the lang values, by index.
var latinLangCodes = [numLatinLangs]string{"en", "es", "fr", "de", "it", "pt", "nl"}

// stopwords are frequent function words of each language: question words,
// articles, pronouns, prepositions, auxiliaries. A word may belong to several.
var stopwords = [numLatinLangs]string{
	langEN: "the is are was were am how what what's whats why when where which who whom whose do does did don't can could would should i i'm my me mine you your you're to of and in on for with it it's its this that these those a an be been have has had from get there they their we our will not about if or than then into any some please much many way there's isn't doesn't can't won't",
	langES: "el la los las de del que qué cómo como por para con es un una unos unas mi mis tu en se puedo puede hay está están cuál cuáles cuánto cuánta cuántos cuándo dónde y o lo su sus al más sin tengo hacer este esta estos porque pero muy también entre sobre cuando hasta desde ser mejor usted le les me",
	langFR: "le la les des du de un une est et pour dans sur avec que qui quel quelle quels quelles comment pourquoi je mon ma mes ce cette ces il elle nous vous pas ne au aux en sont faire puis peux peut où est-ce qu'est-ce j'ai c'est n'est ton votre vos leur leurs très aussi entre sans meilleur quand combien se",
	langDE: "der die das den dem des ein eine einen einem einer ist und wie was warum wo ich mein meine meinen mit für auf nicht kann können zu von im es sich wird werden sind bei oder aus dass welche welcher welches wann ich man auch noch nach über wenn mir mich kein keine ohne gibt bitte am beste besten",
	langIT: "il lo la gli le di del della dei delle che come perché per con è un una uno mio mia miei sono non posso può si nel nella su da dove quando quale quali cosa ho e anche tra fra più sulla sul alla al mi ci ti suo sua migliore quanto quanti",
	langPT: "o a os as de do da dos das que como por para com é um uma meu minha meus não em no na nos nas posso pode se eu qual quais quando onde você vocês são fazer ao aos mais sem isso isto este esta muito também entre sobre melhor quanto quantos está",
	langNL: "de het een en is van hoe wat waarom ik mijn met voor op niet kan zijn te dat die er naar om bij ook je jij wij hoeveel waar wanneer welke maak worden wordt kun kunnen moet geen zonder hebben heb heeft deze dit mijn beste",
}

// negations are the words that negate, in every language Extract knows.
// Contractions in "n't" are recognised by their suffix.
const negations = "not no never none nobody nothing nowhere neither cannot without unable impossible " +
	"dont doesnt didnt isnt arent wasnt werent cant wont shouldnt wouldnt couldnt havent hasnt hadnt aint " +
	"nunca sin ningún ninguna ninguno nada nadie tampoco " + // es (no)
	"ne sans aucun aucune " + // fr
	"nicht kein keine keinen keinem keiner keines nie niemals ohne nichts niemand " + // de
	"non mai senza nessun nessuno nessuna niente nulla " + // it
	"não sem nenhum nenhuma ninguém " + // pt
	"niet geen nooit zonder niets" // nl

// commonWords are never named entities, not even capitalised at the start of
// a sentence: question words and the imperative verbs prompts start with.
const commonWords = "how what why when where which who whom whose what's whats how's where's who's " +
	"can could would should will shall may might must do does did is are was were am be have has had " +
	"i i'm i've i'd i'll my me we our us you your yours he she it its it's they them their this that these those there here " +
	"please hi hello hey thanks thank ok okay yes no not also so and but or if then else because while " +
	"a an the in on at for with without to from by of about into over under after before between during " +
	"explain tell show give write list help find create make convert translate summarize summarise describe compare " +
	"generate calculate compute fix get set add remove delete update install uninstall use using run build check " +
	"is are need want looking trying suggest recommend provide define draft rewrite sort count name what're " +
	"any some all each every most many much more less few other another same such only just even still again " +
	"best good better quick quickly simple simply easy easiest new old first last next step steps " +
	"is there can't don't doesn't won't isn't aren't didn't cannot hello dear sir madam team " +
	"mr mrs ms dr"

// numberWords are the English cardinal words, with their values.
var numberWords = map[string]float64{
	"zero": 0, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
	"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
	"seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
	"sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "dozen": 12, "twice": 2, "thrice": 3, "half": 0.5,
	"third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10,
	"eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15, "sixteenth": 16,
	"seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20, "thirtieth": 30,
	"fortieth": 40, "fiftieth": 50, "hundredth": 100,
}

// scaleWords multiply the number before them.
var scaleWords = map[string]float64{"hundred": 100, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}

// antonymGroups lists, per group, the words of each pole ("|" separates the
// poles, a multi-word marker is joined by "_"). Two texts that both speak of
// a group must name the same poles of it.
var antonymGroups = map[string]string{
	"size":     "big bigger biggest large larger largest huge | small smaller smallest little tiny",
	"extreme":  "max maximum maximise maximize maximal greatest most highest | min minimum minimise minimize minimal least lowest fewest",
	"height":   "high higher highest tall taller tallest | low lower lowest short shorter shortest",
	"length":   "long longer longest | short shorter shortest",
	"speed":    "fast faster fastest quick quicker quickest | slow slower slowest",
	"temp":     "hot hotter hottest warm warmer warmest | cold colder coldest cool cooler coolest",
	"order":    "first | last",
	"time":     "before earlier earliest prior | after later",
	"age":      "old older oldest | new newer newest latest recent young younger youngest",
	"change":   "increase increasing increased raise grow boost enlarge expand | decrease decreasing decreased reduce lower shrink cut lessen",
	"trade":    "buy buying bought purchase purchasing | sell selling sold",
	"add":      "add adding insert append | remove removing delete deleting erase",
	"enable":   "enable enabled enabling activate turn_on switch_on unmute | disable disabled disabling deactivate turn_off switch_off mute",
	"open":     "open opening | close closing shut",
	"start":    "start starting begin beginning launch | stop stopping halt terminate",
	"win":      "win winning won | lose losing lost",
	"import":   "import importing | export exporting",
	"load":     "upload uploading uploaded | download downloading downloaded",
	"push":     "push pushing | pull pulling",
	"crypt":    "encrypt encrypting encryption | decrypt decrypting decryption",
	"zip":      "compress compressing compression zip | decompress decompressing unzip extract",
	"code":     "encode encoding | decode decoding",
	"serial":   "serialize serialise serialization serializing | deserialize deserialise deserialization deserializing",
	"session":  "log_in login sign_in signin logging_in | log_out logout sign_out signout logging_out",
	"install":  "install installing | uninstall uninstalling",
	"permit":   "allow allowed allowing accept accepted permit approve approved | deny denied block blocked reject rejected forbid",
	"io":       "input inputs | output outputs",
	"send":     "send sending sent | receive receiving received",
	"job":      "hire hiring hired | fire firing fired",
	"money":    "credit credited | debit debited",
	"bank":     "deposit depositing | withdraw withdrawal withdrawing",
	"lend":     "borrow borrowing | lend lending",
	"lock":     "lock locking | unlock unlocking",
	"show":     "show showing visible unhide | hide hiding hidden invisible",
	"access":   "public | private",
	"case":     "uppercase upper_case capital capitals | lowercase lower_case",
	"sort":     "ascending asc | descending desc",
	"side":     "left | right",
	"vert":     "top above | bottom below",
	"inout":    "inside internal inbound incoming | outside external outbound outgoing",
	"compass1": "north northern | south southern",
	"compass2": "east eastern | west western",
	"quality":  "best better good | worst worse bad",
	"price":    "cheap cheaper cheapest | expensive pricier",
	"sign":     "positive | negative",
	"truth":    "true | false",
	"right":    "correct right | incorrect wrong",
	"legal":    "legal | illegal",
	"same":     "same similar | different",
	"sub":      "subscribe subscribing | unsubscribe unsubscribing",
	"follow":   "follow | unfollow",
	"merge":    "merge merging join combine | split splitting",
	"mount":    "mount | unmount",
	"connect":  "connect connecting connected | disconnect disconnecting disconnected",
	"attach":   "attach attaching | detach detaching",
	"enter":    "arrive arrival arriving | depart departure departing leave",
	"ampm":     "am a.m | pm p.m",
	"dayhalf":  "morning | evening night",
	"season":   "summer | winter | autumn",
	"sex":      "male men man | female women woman",
	"pro":      "advantage advantages pros benefit benefits | disadvantage disadvantages cons drawback drawbacks",
	"profit":   "profit profits gain gains | loss losses",
	"income":   "income revenue | expense expenses expenditure",
	"import2":  "imports | exports",
	"odd":      "odd | even_number",
	"asleep":   "asleep | awake",
	"wet":      "wet | dry",
	"heavy":    "heavy heavier heaviest | light lighter lightest",
	"wide":     "wide wider widest | narrow narrower narrowest",
	"thick":    "thick thicker | thin thinner",
	"strong":   "strong stronger strongest | weak weaker weakest",
	"easy":     "easy easier easiest | hard harder hardest difficult",
	"rich":     "rich richer richest wealthy wealthiest | poor poorer poorest",
	"inc":      "inclusive including include | exclusive excluding exclude",
	"up":       "upgrade upgrading | downgrade downgrading",
	"online":   "online | offline",
	"read":     "read reading | write writing",
	"pos":      "forward forwards | backward backwards",
	"abs":      "absolute | relative",
	"sync":     "synchronous synchronously sync | asynchronous asynchronously async",
	"static":   "static | dynamic",
	"major":    "major | minor",
	"front":    "frontend front-end | backend back-end",
	"client":   "client | server",
	"parent":   "parent | child",
	"head":     "header | footer",
	"prefix":   "prefix | suffix",
	"vowel":    "vowel vowels | consonant consonants",
	"past":     "past | future",
	"gain":     "gain gains gained gaining | lose loses lost losing",
	"theme":    "dark darker | light lighter bright",
	"zoom":     "zoom_in | zoom_out",
	"scroll":   "scroll_up | scroll_down",
	"volume":   "turn_up louder | turn_down quieter",
	"opt":      "opt_in | opt_out",
	"checkin":  "check_in checkin | check_out checkout",
	"scale":    "scale_up | scale_down",
	"vote":     "upvote | downvote",
}

// A lexeme is what the lexicon knows of a lowercase word.
type lexeme struct {
	langs    uint8    // bit i set: a stopword of lang i
	neg      bool     // negates
	common   bool     // never an entity
	poles    []string // "group:pole" markers
	num      float64  // value of a number word
	isNum    bool     // a number word (numberWords)
	scale    float64  // multiplier of a scale word (scaleWords), or 0
	name     bool     // in the gazetteer
	alias    string   // the canonical key of a name with several spellings
	headsTwo bool     // may start a two-word antonym marker
}

// lexicon maps lowercase words to what Extract needs of them, so that each
// word costs one lookup.
var lexicon = buildLexicon()

func buildLexicon() map[string]*lexeme {
	m := map[string]*lexeme{}
	at := func(w string) *lexeme {
		l := m[w]
		if l == nil {
			l = &lexeme{}
			m[w] = l
		}
		return l
	}
	for i, s := range stopwords {
		for _, w := range strings.Fields(s) {
			l := at(w)
			l.langs |= 1 << i
			l.common = true
		}
	}
	for _, w := range strings.Fields(negations) {
		at(w).neg = true
	}
	for _, w := range strings.Fields(commonWords) {
		at(w).common = true
	}
	for w, v := range numberWords {
		l := at(w)
		l.num, l.isNum = v, true
	}
	for w, v := range scaleWords {
		at(w).scale = v
	}
	for w := range gazetteer {
		at(w).name = true
	}
	for w, a := range aliases {
		at(w).alias = a
	}
	for g, s := range antonymGroups {
		for i, pole := range strings.Split(s, "|") {
			for _, w := range strings.Fields(pole) {
				l := at(w)
				l.poles = append(l.poles, g+":"+string(rune('a'+i)))
				if head, _, ok := strings.Cut(w, "_"); ok {
					at(head).headsTwo = true
				}
			}
		}
	}
	return m
}

// gazetteer lists names users often type in lower case that are entities all
// the same: languages, platforms, products, clouds. Capitalised or not, they
// must agree.
var gazetteer = setOf("python java javascript typescript golang rust kotlin scala ruby php perl haskell elixir " +
	"c# c++ csharp cpp swift matlab fortran cobol bash powershell zsh sql nosql graphql html css json yaml xml csv toml " +
	"react angular vue svelte django flask rails laravel spring nodejs node.js express nextjs deno " +
	"aws azure gcp heroku vercel netlify cloudflare kubernetes k8s docker podman terraform ansible jenkins " +
	"git github gitlab bitbucket jira confluence slack zoom outlook gmail excel powerpoint onedrive dropbox " +
	"windows linux ubuntu debian fedora centos macos mac osx ios android iphone ipad chrome firefox safari edge " +
	"postgres postgresql mysql sqlite mongodb redis kafka rabbitmq elasticsearch cassandra dynamodb snowflake " +
	"pandas numpy pytorch tensorflow keras spark hadoop excel vscode vim emacs intellij xcode npm pip conda yarn " +
	"openai chatgpt gpt claude gemini llama anthropic google microsoft apple amazon meta netflix paypal stripe " +
	"visa mastercard amex venmo bitcoin ethereum uber airbnb tesla " +
	"dollar euro yen pound sterling peso rupee yuan renminbi franc krona krone rouble ruble lira rand " +
	// Days and months (not "may", "march": verbs too).
	"monday tuesday wednesday thursday friday saturday sunday january february april june july august " +
	"september october november december " +
	// Countries and cities whose names are not also common words ("turkey", "nice", "split" are).
	"usa america canada mexico brazil argentina colombia peru england britain scotland ireland france germany " +
	"spain portugal italy netherlands belgium switzerland austria sweden norway denmark finland iceland poland " +
	"greece russia ukraine egypt morocco nigeria kenya india pakistan china japan korea vietnam thailand " +
	"indonesia philippines australia zealand singapore malaysia israel iran iraq " +
	"london paris berlin madrid rome lisbon amsterdam brussels vienna prague budapest warsaw dublin edinburgh " +
	"barcelona munich milan venice florence zurich geneva stockholm oslo copenhagen helsinki athens istanbul " +
	"moscow cairo dubai mumbai delhi bangalore beijing shanghai tokyo kyoto osaka seoul bangkok sydney " +
	"melbourne toronto vancouver montreal chicago boston seattle denver dallas houston miami atlanta " +
	"austin philadelphia manhattan brooklyn california texas florida")

// aliases map the keys of names with several spellings to one.
var aliases = map[string]string{
	"golang": "go", "js": "javascript", "ts": "typescript", "py": "python", "postgresql": "postgres", "psql": "postgres",
	"nodejs": "node", "node.js": "node", "k8s": "kubernetes", "pc": "computer", "cv": "resume", "usa": "us",
	"mac": "macos", "osx": "macos", "csharp": "c#", "cpp": "c++", "mongo": "mongodb",
	"usd": "dollar", "eur": "euro", "jpy": "yen", "gbp": "pound",
}

func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
