package fresh

// The rules of Check, one method per kind, and the framings they share.

// howTo reports a question about how to do or how something is: "how do
// I", "how does", "how to", "how are … made". "how is", "how's", "how
// much", "how many", "how long" and "how old" ask for a value.
func (p *words) howTo() bool {
	if p.find("how", "to") >= 0 {
		return true // "how to …", "tell me how to …"
	}
	if p.at(0) != "how" {
		return false
	}
	switch p.at(1) {
	case "do", "does", "did", "can", "could", "should", "would", "are", "were", "was":
		return true
	}
	return false
}

// code reports a question about code: a code word, or "in/with/using" a
// programming language or tool.
func (p *words) code() bool {
	if p.has(cCode) {
		for i, w := range p.all() {
			if p.cls[i]&cCode != 0 && !((w == "code" || w == "codes") && p.clsAt(i-1)&cCodeQual != 0) {
				return true // not a PIN code, a recovery code
			}
		}
	}
	if !p.has(cLang) {
		return false
	}
	for i := range p.n {
		if p.cls[i]&cLang != 0 {
			switch p.at(i - 1) {
			case "in", "with", "using", "via":
				return true
			}
		}
	}
	return false
}

// task reports a task on a text the prompt gives: "Summarise this news: …".
func (p *words) task() bool { return p.clsAt(0)&cTask != 0 }

// aside reports a framing under which neither the clock nor the world's
// state is asked for: how-to, concept (a comparison of concepts, not of
// teams), code, a task on a given text.
func (p *words) aside() bool {
	return p.howTo() || p.has(cConcept) || p.has(cVersus) && !p.sport() || p.code() || p.task()
}

// sport reports words of a game: score, match, game.
func (p *words) sport() bool {
	return p.find("score") >= 0 || p.find("scores") >= 0 || p.find("match") >= 0 || p.find("game") >= 0
}

// marker reports a time marker that makes a question about now: "today",
// "right now", "this week", "last night", "latest"; "latest", "current"
// and "recent" not when an explicit year anchors them ("the latest trends
// as of 2020").
func (p *words) marker() bool { return p.markerOf(true) }

// strongMarker reports a marker of the present moment, not of the latest
// of something: "today", "right now", "this week", "at the moment".
func (p *words) strongMarker() bool { return p.markerOf(false) }

func (p *words) markerOf(anchored bool) bool {
	if p.has(cMarker) {
		for i, w := range p.all() {
			c := p.cls[i]
			if c&cMarker != 0 && (c&cAnchored == 0 || anchored && !p.year || w == "currently") {
				return true
			}
		}
	}
	for i, w := range p.all() {
		switch w {
		case "this":
			switch p.at(i + 1) {
			case "week", "weekend", "morning", "afternoon", "evening", "month", "year", "season", "quarter":
				return true
			}
		case "last":
			if p.at(i+1) == "night" {
				return true
			}
		case "at":
			if p.seq(i+1, "the", "moment") {
				return true
			}
		case "so":
			if p.at(i+1) == "far" {
				return true
			}
		}
	}
	return false
}

// clock reports a question whose answer depends on the current date or
// time.
func (p *words) clock() bool {
	if p.aside() {
		return false
	}
	switch {
	case p.find("time", "is", "it") >= 0, p.find("what", "time", "it", "is") >= 0:
		return true // what time is it; do you know what time it is
	case p.theTime(), p.theDate(), p.nowUnit(), p.whichUnit(), p.until(), p.offset(), p.age():
		return true
	}
	// A question on the state of the calendar or the world now: "Is it
	// Monday today?", "Are banks open today?".
	switch p.at(0) {
	case "is", "are", "will", "does", "do":
		return p.has(cMarker) && p.marker() && !p.has(cAnchored)
	}
	return false
}

// endsClause reports whether the word at i ends what is asked: the end, or
// a word that only places it in time or space.
func (p *words) endsClause(i int) bool {
	switch p.at(i) {
	case "", "now", "today", "tomorrow", "yesterday", "right", "in", "please", "there", "here", "currently", "at":
		return true
	}
	return false
}

// theTime: "what's the time (in Tokyo)", "tell me the time", "current time".
func (p *words) theTime() bool {
	for i, w := range p.all() {
		if w != "time" {
			continue
		}
		prev := p.at(i - 1)
		if prev == "current" || prev == "local" && p.at(i-2) == "current" {
			return true
		}
		if prev == "the" && p.endsClause(i+1) {
			switch p.at(i - 2) {
			case "what's", "whats", "is", "me", "know", "tell":
				return true
			}
		}
		if next := p.at(i + 1); next == "now" || next == "right" && p.at(i+2) == "now" {
			return true
		}
	}
	return false
}

// theDate: "what's the date (today)", "today's date", "date tomorrow".
func (p *words) theDate() bool {
	for i, w := range p.all() {
		if w != "date" && w != "day" && w != "year" && w != "month" {
			continue
		}
		switch p.at(i - 1) {
		case "today's", "tomorrow's", "yesterday's", "current":
			return true
		case "the":
			if w == "date" && p.endsClause(i+1) {
				switch p.at(i - 2) {
				case "what's", "whats", "is", "me", "know", "tell":
					return true
				}
			}
		}
		if w == "date" {
			switch p.at(i + 1) {
			case "today", "tomorrow", "yesterday", "now":
				return true
			}
		}
	}
	return false
}

// whichUnit: "what day is it", "what date is today", "what month are we
// in", "what day of the week is it today", "what week number is it".
func (p *words) whichUnit() bool {
	switch p.at(0) {
	case "what", "which", "what's", "whats":
	default:
		return false
	}
	if p.index(cUnit) < 0 && p.find("date") < 0 && p.find("quarter") < 0 && p.find("season") < 0 {
		return false
	}
	return p.find("is", "it") >= 0 || p.find("is", "today") >= 0 || p.find("are", "we") >= 0 || p.find("is", "this") >= 0
}

// nowUnit: "<unit> today/now" after a question word: "what is the day
// today", "which month now".
func (p *words) nowUnit() bool {
	i := p.index(cUnit)
	if i < 0 || p.clsAt(0)&cAboutHead == 0 {
		return false
	}
	switch p.at(i + 1) {
	case "today", "now":
		return true
	}
	return false
}

// until: "how many days until Christmas", "how long until Friday", "how
// many weeks are left in this year", "how many days since January 1".
func (p *words) until() bool {
	start := -1
	switch {
	case p.seq(0, "how", "many") && p.clsAt(2)&cUnit != 0:
		start = 3
	case p.seq(0, "how", "long"):
		start = 2
	default:
		return false
	}
	for i := start; i < start+3 && i < p.n; i++ {
		switch p.at(i) {
		case "until", "till", "til", "left", "since", "ago", "before", "to":
			return p.at(i) != "to" || p.at(i+1) == "go"
		}
	}
	return false
}

// offset: a date counted from today: "what was the date 30 days ago",
// "what will the date be in 90 days", "the day after tomorrow".
func (p *words) offset() bool {
	if p.find("date") < 0 && p.find("day") < 0 {
		return false
	}
	if p.find("ago") >= 0 || p.find("from", "now") >= 0 {
		return true
	}
	for i, w := range p.all() {
		if w == "in" && isDigits(p.at(i+1)) && p.clsAt(i+2)&cUnit != 0 {
			return true
		}
	}
	return false
}

// age: "how old am I if I was born in 1990".
func (p *words) age() bool {
	return p.seq(0, "how", "old") && (p.at(2) == "am" || p.at(2) == "will" || p.find("born") >= 0)
}

// live reports a question on the state of the world now: news, prices,
// rates, weather, scores, outages, the latest version of something.
func (p *words) live() bool {
	if p.aside() {
		return false
	}
	// A live topic with a marker: "latest news", "gas prices today",
	// "current rates", "the S&P 500 today", "how much is oil today".
	if (p.liveNoun() || p.has(cLiveWeak) || p.find("s", "p") >= 0 || p.seq(0, "how", "much")) && p.marker() {
		return true
	}
	switch {
	case p.liveNoun() && p.valueQuestion() && !p.has(cSeason):
		return true // "what's the weather in Paris", "bitcoin price"; not "in October"
	case p.strongMarker() && p.valueQuestion():
		return true // "what's the newest iPhone right now"
	case p.down(), p.game(), p.flight():
		return true
	}
	return false
}

// liveNoun reports a topic that is live when its value is asked for:
// weather, prices, news, an exchange rate; not stock "in stock".
func (p *words) liveNoun() bool {
	if p.find("exchange", "rate") >= 0 || p.find("exchange", "rates") >= 0 {
		return true
	}
	if !p.has(cLive) {
		return false
	}
	for i, w := range p.all() {
		if p.cls[i]&cLive != 0 && !(w == "stock" && (p.at(i-1) == "in" || p.at(i-1) == "of")) {
			return true
		}
	}
	return false
}

// valueQuestion reports a question for a current value ("what's the
// weather in Paris", "is it raining", "bitcoin price"), not for a concept
// ("what is a stock split") nor about the past ("what was the weather").
func (p *words) valueQuestion() bool {
	switch p.at(0) {
	case "what", "what's", "whats":
		next := p.at(1)
		if p.at(0) == "what" {
			if next != "is" && next != "are" {
				return false
			}
			next = p.at(2)
		}
		return next != "a" && next != "an"
	case "how's", "hows", "any", "will", "do", "give", "tell", "show", "check", "get":
		return true
	case "how":
		return p.at(1) == "much" || p.at(1) == "is"
	case "is", "are":
		return p.at(1) == "it" || p.at(1) == "there"
	}
	return p.n <= 5 && p.clsAt(0)&cAboutHead == 0
}

// down: "Is Slack down?", "is AWS down right now".
func (p *words) down() bool {
	i := p.find("down")
	return i > 0 && (p.at(0) == "is" || p.at(0) == "are") && (i == p.n-1 || p.endsClause(i+1))
}

// game: the score of a game being played: "the score of the Lakers game",
// "who's winning", "live score".
func (p *words) game() bool {
	if p.year {
		return false
	}
	if (p.find("score") >= 0 || p.find("scores") >= 0) && (p.find("game") >= 0 || p.find("match") >= 0) {
		return true
	}
	return p.find("who's", "winning") >= 0 || p.find("is", "winning") >= 0
}

// flight: "is my flight on time", "is the train delayed".
func (p *words) flight() bool {
	switch p.at(0) {
	case "is", "are", "has", "what", "what's", "whats", "check":
	default:
		return false // "My flight was cancelled, how can I …"
	}
	if p.find("flight") < 0 && p.find("train") < 0 {
		return false
	}
	return p.find("on", "time") >= 0 || p.find("delayed") >= 0 || p.find("status") >= 0 || p.find("cancelled") >= 0
}

// request reports a request for something made, not a question about it:
// an imperative, "can you …", a short noun phrase ("uuid v4 please", not
// "I forgot my password"), or a question for a value in a range ("what's a
// number between 1 and 6"); never a question on how, why or what something
// is, nor code.
func (p *words) request() bool {
	if p.code() || p.task() || p.howTo() {
		return false
	}
	if p.clsAt(0)&cAboutHead != 0 && !p.rng {
		return false
	}
	return p.produce() || p.rng || p.n <= 6 && p.clsAt(0)&cSubject == 0
}

// produce reports a verb asking for something made: "generate", "give
// me", "come up with", "think of", "I need a"; not "I need to reset".
func (p *words) produce() bool {
	if p.find("come", "up", "with") >= 0 || p.find("think", "of") >= 0 {
		return true
	}
	if !p.has(cProduce) {
		return false
	}
	for i, w := range p.all() {
		if p.cls[i]&cProduce == 0 {
			continue
		}
		switch w {
		case "need", "want", "like":
			if p.at(i+1) == "to" {
				continue
			}
		}
		return true
	}
	return false
}

// secret reports a request for a new secret.
func (p *words) secret() bool {
	if p.has(cSecret) {
		return true
	}
	i := p.find("key")
	if i < 0 {
		i = p.find("keys")
	}
	return i > 0 && p.clsAt(i-1)&cKeyKind != 0 || p.find("recovery", "code") >= 0 || p.find("recovery", "codes") >= 0
}

// random reports a request for a random pick.
func (p *words) random() bool {
	if p.has(cRandom) {
		for i := range p.n {
			if p.cls[i]&cRandom != 0 && p.clsAt(i+1)&cRandomTerm == 0 {
				return true
			}
		}
	}
	if p.has(cChance) && p.has(cThrow) {
		return true
	}
	for _, w := range p.all() {
		if dice(w) {
			return true // 3d6, d20
		}
	}
	switch {
	case p.find("heads", "or", "tails") >= 0, p.find("at", "random") >= 0, p.find("surprise", "me") >= 0:
		return true
	case p.find("pick", "a", "number") >= 0, p.find("think", "of", "a", "number") >= 0, p.find("spin", "the", "wheel") >= 0:
		return true
	}
	return false
}

// dice reports dice notation: "3d6", "d20", "2d10".
func dice(w string) bool {
	i := 0
	for i < len(w) && w[i] >= '0' && w[i] <= '9' {
		i++
	}
	return i < len(w) && w[i] == 'd' && isDigits(w[i+1:])
}
