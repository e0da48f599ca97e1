package fresh

import "strings"

// Word classes: what a word may signal. A word may have several.
const (
	cMarker     uint32 = 1 << iota // a time marker: today, now, currently, latest
	cAnchored                      // a marker an explicit year anchors: latest, current, recent
	cLive                          // a topic that is live when asked as a value: weather, price, news
	cLiveWeak                      // live only with a time marker: score, version, rates
	cUnit                          // a unit of calendar time: day, week, year
	cAboutHead                     // a first word that asks about, not for: how, why, explain, is
	cConcept                       // asks about a concept or a fixed time: why, history, usually
	cTask                          // a task on a given text: summarise, translate
	cCode                          // code: function, script, regex
	cLang                          // a programming language or tool, after in/with/using
	cProduce                       // asks for something made: generate, pick, give
	cRandom                        // randomness itself: random, shuffle, lottery
	cChance                        // an instrument of chance, with a verb: coin, dice
	cThrow                         // the verbs of chance: flip, toss, roll
	cSecret                        // a secret: password, token, uuid
	cKeyKind                       // what makes "key" a secret: api, private, encryption
	cRandomTerm                    // a term "random" names, not asks for: forest, variable
	cVersus                        // a comparison: vs, versus (of concepts, or of teams in a game)
	cCodeQual                      // makes "code" a secret, not a program: pin, recovery
	cSubject                       // starts a sentence, not a noun phrase: i, my, can
	cSeason                        // a month or season, which anchors weather to the climate
	cCue                           // a word some rule keys on that no other class has: time, date, down
)

// cTrigger is the classes of which a prompt must have a word for any rule
// to flag it (or a word with a digit: dice such as "3d6").
const cTrigger = cMarker | cLive | cLiveWeak | cUnit | cSecret | cRandom | cChance | cCue

// classes are the words' classes.
var classes = buildClasses(map[uint32]string{
	cMarker: "today today's tonight tonight's now currently current latest newest recent recently live " +
		"yesterday yesterday's tomorrow tomorrow's breaking",
	cAnchored: "latest newest current currently recent recently",
	cLive: "weather forecast forecasts raining snowing rain snow umbrella temperature price prices stock stocks " +
		"shares headlines headline news traffic outage outages trading",
	cLiveWeak: "score scores won winning leading standings version release released update updates rate rates " +
		"trending happening happened new cases president minister ceo champion election polls market " +
		"quality delayed case figures statistics stats cost costs nasdaq dow ftse dax nikkei sensex index",
	cUnit: "day days week weeks month months year years hour hours minute minutes second seconds sleeps",
	cAboutHead: "how why explain describe define compare where when which is are was were does do did has " +
		"have should what what's whats who whose",
	cConcept: "why explain explanation describe define definition meaning means history historical causes " +
		"cause caused affect affects work works calculate calculated predict usually typically normally " +
		"average ever record climate difference fake",
	cTask: "summarize summarise summary translate rewrite proofread paraphrase classify analyze analyse edit",
	cCode: "function functions code script scripts snippet program programmatically method library module " +
		"regex algorithm implement implementation formula",
	cLang: "python java javascript js typescript ts go golang rust c ruby php swift kotlin bash shell " +
		"powershell sql excel node nodejs react numpy pandas",
	cProduce: "generate create make give pick choose select draw flip toss roll throw shuffle randomize " +
		"randomise suggest invent spin need want like assign get provide produce output tell name issue",
	cRandom:  "random randomly randomize randomise randomized randomised shuffle shuffled lottery powerball euromillions tarot",
	cChance:  "coin coins dice die d4 d6 d8 d10 d12 d20 d100 card",
	cThrow:   "flip toss roll throw draw spin",
	cSecret:  "password passwords passphrase passphrases passcode pin pins uuid uuids uuid4 guid guids otp nonce salt credentials token tokens secret secrets",
	cKeyKind: "api secret private encryption signing access ssh rsa aes jwt hmac license",
	cVersus:  "vs versus",
	cCue:     "time date quarter season until till til old exchange down flight train key keys recovery heads surprise number wheel",
	cSeason: "january february march april may june july august september october november december " +
		"spring summer autumn fall winter",
	cSubject:    "i i'm i've i'd my me we our you your it this that there can could would will shall may might must",
	cCodeQual:   "pin recovery verification backup access security confirmation activation promo discount coupon otp",
	cRandomTerm: "forest forests variable variables walk walks access effect effects seed seeds module class process error errors matrix graph field",
})

// classTable maps words to their classes: open addressing on the words'
// hash, which scan computes anyway, so a lookup costs no second hash.
type classTable struct {
	words []string
	cls   []uint32
	mask  uint32
}

func buildClasses(m map[uint32]string) *classTable {
	all := map[string]uint32{}
	for c, ws := range m {
		for _, w := range strings.Fields(ws) {
			all[w] |= c
		}
	}
	size := uint32(1)
	for size < 4*uint32(len(all)) {
		size <<= 1
	}
	t := &classTable{words: make([]string, size), cls: make([]uint32, size), mask: size - 1}
	for w, c := range all {
		i := hash(w) & t.mask
		for t.words[i] != "" {
			i = (i + 1) & t.mask
		}
		t.words[i], t.cls[i] = w, c
	}
	return t
}

// of returns the classes of word w, whose hash is h.
func (t *classTable) of(w []byte, h uint32) uint32 {
	for i := h & t.mask; t.words[i] != ""; i = (i + 1) & t.mask {
		if t.words[i] == string(w) {
			return t.cls[i]
		}
	}
	return 0
}
