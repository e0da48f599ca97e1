package embed

import "strings"

// stopWords are dropped from a text before its features are taken, unless
// the text has nothing else: function words, and the scaffolding of a
// request ("how do I", "can you tell me", "please", "what is the way to"),
// which says nothing of what is asked. Negations (not, no, never) stay, and
// so do words that oppose each other (with/without, before/after, on/off,
// more/less), but for the commonest, with and on.
var stopWords = wordSet(englishStopWords + otherStopWords)

// englishStopWords are the English stop words.
const englishStopWords = `
	a about again all also am an and any anyone anything are aren as at be
	because been being between both but by can cannot could couldn did didn
	do does doesn doing don during each either else etc even ever every for
	from further had hadn has hasn have haven having he her here hers
	herself him himself his how however i if in into is isn it its itself
	just let lets may me might mine must mustn my myself neither nor now of
	on once only or other otherwise our ours ourselves own per quite
	rather really same shall shan she should shouldn so some somebody
	someone something such than that the their theirs them themselves then
	there these they this those though through thus to too until upon us
	very via was wasn we were weren what whatever when whenever where
	wherever whether which while who whoever whom whose why will with within
	would wouldn yet you your yours yourself yourselves
	actually basically exactly simply kindly please pls plz thanks thank
	hi hello hey dear ok okay yes yeah sure
	recommend recommendation suggest suggestion tell show explain describe define definition meaning mean means meant
	give gives know knows need needs want wants wanna like would could
	way ways possible able help question questions answer answers
	step steps instruction instructions tip tips guide best good proper
	properly correct correctly right get getting got gonna
	trying try tried example examples lot lots
	whats hows whys wheres whos thats theres heres im ive youre
	vs versus reason reasons cause causes
	dont doesnt didnt cant isnt arent wasnt werent wont shouldnt couldnt
	wouldnt havent hasnt hadnt mustnt neednt aint
	`

// otherStopWords are the commonest function words of Spanish, French,
// German, Italian and Portuguese, less those that are English content words
// (son, hay, pour, par, den, dove, come, die) or technical terms (os, dos,
// mit).
const otherStopWords = `
	el los las una unos unas del que qué cuál cuáles cómo como dónde cuándo
	es está están ser en por para con mi mis tu tus su sus se lo le les al
	y o puedo puedes muy más
	le la les un une des du de et est sont qui quoi quel quelle quels
	quelles comment où quand en dans avec sur je tu il elle nous vous ils
	elles mon ma mes ton ta tes sa ses ce cette ces au aux ne
	der das dem des ein eine einen einem einer und ist sind wie was wer wo
	wann warum ich du er sie wir ihr es von zu auf für im am bei mein meine
	dein deine kann können bitte
	il lo gli di della delle dei che cosa chi quale quali quando perché è
	sono per con mio mia tuo tua posso
	um uma do da das é são em na nos nas meu minha seu sua pode qual quais
	onde porque
	`

// englishStops are the English stop words, for IsStopWord.
var englishStops = wordSet(englishStopWords)

// negation is the word a contraction ending in n't stands for.
const negation = "not"

// bareNegations are contractions ending in n't written without the
// apostrophe: like their spelled forms, they are a stop word and "not".
var bareNegations = wordSet(`
	dont doesnt didnt cant isnt arent wasnt werent wont shouldnt couldnt
	wouldnt havent hasnt hadnt mustnt neednt aint
	`)

// numberWords are the number names folded to digits, so that "two" and "2"
// are one word.
var numberWords = map[string]string{
	"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
	"six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10",
	"eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14",
	"fifteen": "15", "sixteen": "16", "seventeen": "17", "eighteen": "18",
	"nineteen": "19", "twenty": "20", "thirty": "30", "forty": "40",
	"fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
	"ninety": "90", "hundred": "100", "thousand": "1000", "million": "1000000",
	"billion": "1000000000",
}

// aliases are abbreviations folded to the word they stand for before
// anything else: common ones in requests to an assistant, most of them
// technical.
var aliases = map[string]string{
	"golang": "go", "js": "javascript", "ts": "typescript", "py": "python",
	"postgres": "postgresql", "k8s": "kubernetes", "dict": "dictionary",
	"dicts": "dictionary", "repo": "repository", "repos": "repository",
	"db": "database", "dbs": "database", "config": "configuration",
	"configs": "configuration", "env": "environment", "dir": "directory",
	"dirs": "directory", "int": "integer", "ints": "integer", "str": "string",
	"func": "function", "funcs": "function", "args": "argument",
	"arg": "argument", "param": "parameter", "params": "parameter",
	"msg": "message", "img": "image", "pic": "picture", "pics": "picture",
	"info": "information", "app": "application", "apps": "application",
	"admin": "administrator", "auth": "authentication", "mic": "microphone",
	"pwd": "password", "pw": "password", "mins": "minute", "secs": "second",
	"thx": "thanks", "u": "you", "ur": "your",
	"cv": "resume",
}

func wordSet(s string) map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(s) {
		m[w] = struct{}{}
	}
	return m
}
