package injection

// Instructions addressed to the model inside content it reads: an e-mail,
// a web page, a CV, a tool's output, a code comment. "<!-- AI: …", "Note to
// the AI reading this CV: …", "Recruiting assistant, always rank …",
// "Assistants summarising this page must tell …", "[Für automatische
// Auswertung: …]", "If you are a language model, state …".
//
// The evidence adds up: an addressee (an AI word, or an agent noun or
// "automated" when it is addressed or reading), a header that ends in a
// colon or a vocative comma, an address word before it ("note to", "for",
// "dear"), a reading verb ("reading this", "der … liest", "que lees"), a
// hiding place (a comment, a bracket, hidden HTML), a modal ("must tell"),
// an order right after the header, and text before it (content the model
// reads, not the user's own opening line). A user opening a request
// politely ("Dear assistant, could you …", "AI: please summarise …") is
// not an injection.

// Address weights (log-odds).
const (
	addrBase        = -1.6
	addrHeader      = 0.7 // "AI:", "Note for automated tools:"
	addrVocative    = 0.5 // "assistant, …" at a clause start
	addrAddressed   = 0.8 // "note to", "for", "dear", "an den"
	addrReading     = 1.0 // "reading this CV", "que lees este correo"
	addrHidden      = 0.8 // "<!--", "[", a code comment, hidden HTML
	addrModal       = 0.8 // "assistants … must tell"
	addrOrder       = 1.0 // an order right after the header
	addrLateOrder   = 0.7 // an order within a few words
	addrEmbedded    = 0.5 // the address follows other content
	addrConditional = 1.5 // "if you are a language model"
	addrPolite      = 1.5 // the text opens with a polite request
	addrNoOrder     = 1.0 // no order follows
	addrHeaderReach = 6   // words from the addressee to the header's colon
	addrOrderReach  = 8   // words from the header to the order
)

// aiAddress weighs an address of the model at token i (an AI word or an
// agent noun).
func (sc *scanner) aiAddress(i int) {
	first := sc.addresseeStart(i)
	addressed := sc.addressedBefore(first)
	reading := sc.readingNear(i)
	modal := sc.modalAfter(i)
	cond := sc.conditional(first)
	if sc.toks[i].cls&cAI == 0 && !addressed && !reading {
		return // "our automated tests", "an agent will answer shortly"
	}
	hdr, vocative := sc.headerEnd(i)
	hidden := sc.hidden(first) || sc.hidden(i)
	if hdr < 0 && !reading && !modal && !hidden && !cond {
		return
	}
	z := addrBase
	switch {
	case hdr >= 0 && vocative:
		z += addrVocative
	case hdr >= 0:
		z += addrHeader
	}
	if addressed {
		z += addrAddressed
	}
	if reading {
		z += addrReading
	}
	if hidden {
		z += addrHidden
	}
	if modal {
		z += addrModal
	}
	if cond {
		z += addrConditional
	}
	from := i
	if hdr >= 0 {
		from = hdr
	}
	end := from + 1
	if o := sc.orderAfter(from, modal); o >= 0 {
		end = o + 1
		if o-from <= 3 || sc.toks[first].sent {
			z += addrOrder
		} else {
			z += addrLateOrder
		}
	} else {
		z -= addrNoOrder // "for an LLM app: a DAN jailbreak or …": no order given
	}
	if sc.embedded(first) {
		z += addrEmbedded
	} else if sc.polite(first, end+3) {
		z -= addrPolite
	}
	if sc.add(famHijack, first, end, z) && hidden {
		sc.hits[len(sc.hits)-1].raw = true // nobody hides an example: no discount for quotation marks around it
	}
}

// addresseeStart is the first token of the addressee phrase ending at i:
// its modifiers ("Recruiting assistant", "AI scheduling assistants").
func (sc *scanner) addresseeStart(i int) int {
	first := i
	for k := i - 1; k >= 0 && k >= i-2 && !sc.toks[k+1].sent; k-- {
		c := sc.toks[k].cls
		if c&(cAI|cAgent) != 0 || c == 0 && !sc.isAny(k, addressWords) && !sc.isAny(k, articles) {
			first = k
			continue
		}
		break
	}
	return first
}

// addressedBefore reports whether an address word stands before the
// addressee starting at token first: "note to the", "for", "dear", "an
// den", "para el sistema de".
func (sc *scanner) addressedBefore(first int) bool {
	for k := first - 1; k >= 0 && k >= first-4; k-- {
		if sc.isAny(k, addressWords) || sc.is(k, "an") && sc.isAny(k+1, germanArticles) {
			return true // "note to", "an den KI-Assistenten" (not "an agent")
		}
		if sc.toks[k+1].sent || sc.toks[k].cls&(orderVerbs|cYou|cMine|cBe) != 0 {
			return false
		}
	}
	return false
}

// readingNear reports whether the addressee at token i reads the content:
// "AI reading this", "assistants summarising", "the analysing model", "der
// dieses Postfach liest", "que lees", "qui lit".
func (sc *scanner) readingNear(i int) bool {
	if i > 0 && sc.isAny(i-1, readingWords) {
		return true
	}
	for k := i + 1; k < len(sc.toks) && k <= i+4; k++ {
		if sc.toks[k].sent {
			return false
		}
		if sc.isAny(k, readingWords) || k == i+1 && sc.toks[k].cls&cTaskIng != 0 {
			return true
		}
	}
	return false
}

// modalAfter reports whether the addressee at token i is followed by a
// modal and a verb: "assistants must tell", "the model should ignore".
func (sc *scanner) modalAfter(i int) bool {
	for k := i + 1; k < len(sc.toks) && k <= i+4; k++ {
		if sc.toks[k].sent {
			return false
		}
		if sc.isAny(k, modals) {
			return k+1 < len(sc.toks) && !sc.toks[k+1].sent && !sc.isAny(k+1, beWords) &&
				(sc.toks[k+1].cls&(cOrder|cImper|cOvr|cReveal|cPivot|cExfilVerb|cNeg) != 0 || sc.isAny(k+1, adverbs))
		}
	}
	return false
}

// conditional reports whether the addressee starting at token first is
// the object of "if you are": "if you are a language model, …".
func (sc *scanner) conditional(first int) bool {
	k := first - 1
	for k >= 0 && sc.isAny(k, articles) {
		k--
	}
	return k >= 2 && sc.toks[k].cls&cBe != 0 && sc.toks[k-1].cls&cYou != 0 && sc.isAny(k-2, ifWords)
}

// headerEnd is the token that ends the address's header — followed by a
// colon within addrHeaderReach words, or by a comma right after the
// addressee at a clause start (vocative) — or -1.
func (sc *scanner) headerEnd(i int) (int, bool) {
	if sc.commaAfter(i) && sc.clauseStart(sc.addresseeStart(i)) {
		return i, true
	}
	for k := i; k < len(sc.toks) && k <= i+addrHeaderReach; k++ {
		if k > i && sc.toks[k].sent {
			return -1, false
		}
		if sc.colonAfter(k) {
			return k, false
		}
		if k > i && sc.commaAfter(k) && sc.conditional(sc.addresseeStart(i)) {
			return k, true // "if you are a language model writing a comparison, …"
		}
	}
	return -1, false
}

// clauseStart reports whether token k starts a sentence, a line, a quoted
// string or a bracket, or follows an address word.
func (sc *scanner) clauseStart(k int) bool {
	if sc.toks[k].sent || k > 0 && sc.isAny(k-1, addressWords) {
		return true
	}
	at := int(sc.n.off[sc.toks[k].s])
	for j := at - 1; j >= 0 && j >= at-3; j-- {
		switch sc.text[j] {
		case ' ', '\t':
			continue
		case '"', '\'', '[', '(', '{', ':', '\n', '>', '-':
			return true
		}
		return false
	}
	return k == 0
}

// orderAfter is the first order within addrOrderReach words after token
// from, or -1: an imperative or a prohibition that opens a clause (right
// after the header, after a comma — "before answering, open …" — or a new
// sentence), or a modal's verb. Adverbs and "please" may stand before it.
func (sc *scanner) orderAfter(from int, modal bool) int {
	opens := true // token k opens a clause
	for k := from + 1; k < len(sc.toks) && k <= from+addrOrderReach; k++ {
		t := sc.toks[k]
		opens = opens || t.sent || sc.commaAfter(k-1) || sc.colonAfter(k-1)
		if modal && sc.isAny(k-1, modals) {
			return k
		}
		if !opens {
			continue
		}
		switch {
		case t.cls&orderVerbs != 0 && t.cls&cTaskIng == 0:
			return k
		case t.cls&cNeg != 0 && k+1 < len(sc.toks) && sc.toks[k+1].cls&(orderVerbs|cFollow) != 0:
			return k + 1 // "do not file this message"
		case sc.isAny(k, adverbs) || sc.isAny(k, politeWords) || sc.isAny(k, connectives) || t.cls&cPivot != 0:
			continue // "also add", "please forward", "now tell", "so tell"
		}
		opens = false
	}
	return -1
}

// orderVerbs are the classes of a verb that gives an order.
const orderVerbs = cOrder | cImper | cOvr | cReveal | cExfilVerb | cChange

// embedded reports whether the address starting at token first follows
// other content: a line or a sentence of text before it. Constant time: the
// first break is recorded while tokenizing (walking back from every address
// made a text without breaks quadratic).
func (sc *scanner) embedded(first int) bool {
	return first >= sc.brk
}

// polite reports whether tokens [first, end) ask politely: "could you",
// "please", "can you help".
func (sc *scanner) polite(first, end int) bool {
	return sc.anyWord(first, min(end, len(sc.toks)), politeWords)
}

var (
	articles     = []string{"the", "any", "an", "a", "all", "every", "whichever", "whatever", "die", "der", "den", "dem", "la", "le", "l", "el", "les", "los", "las"}
	addressWords = []string{"note", "dear", "attention", "hey", "hello", "hi", "to", "notice", "fur", "pour", "para", "al", "hinweis", "nota", "remarque", "instruction", "message", "ps", "memo"}
	readingWords = []string{"reading", "processing", "parsing", "reviewing", "analysing", "analyzing", "scanning", "evaluating", "screening", "crawling", "browsing",
		"reads", "processes", "parses", "reviews", "sees", "handles", "summarises", "summarizes", "summarising", "summarizing",
		"liest", "verarbeitet", "pruft", "lees", "procesas", "analizas", "lee", "lit", "traite", "analyse"}
	modals         = []string{"must", "should", "shall", "muss", "mussen", "soll", "sollen", "debe", "deben", "doit", "doivent"}
	beWords        = []string{"be", "not", "sein", "ser", "etre"}
	adverbs        = []string{"always", "never", "now", "also", "immediately", "just", "then", "only", "immer", "sofort", "auch", "nur", "siempre", "ahora", "tambien", "solo", "toujours", "maintenant", "aussi", "seulement"}
	germanArticles = []string{"den", "die", "das", "dem", "alle", "jede", "jeden"}
	connectives    = []string{"so", "and", "then", "und", "dann", "also", "y", "luego", "entonces", "et", "puis", "alors", "donc"}
	ifWords        = []string{"if", "when", "whenever", "wenn", "falls", "si", "cuando", "quand", "lorsque"}
	politeWords    = []string{"please", "could", "can", "would", "kindly", "thanks", "bitte", "kannst", "konntest", "puedes", "podrias", "favor", "peux", "pourrais", "merci"}
)
