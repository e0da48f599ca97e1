package injection

import (
	"strings"
	"sync"
)

// Word classes. A word of the lexicon carries a set of them; the families
// (rules.go) are written over classes, not over words, so that a paraphrase
// ("disregard the foregoing directives") matches the same rule as the
// canonical phrase ("ignore previous instructions").
const (
	cOvr       uint64 = 1 << iota // override verb: ignore, disregard, vergiss, olvida, oubliez
	cOvrS                         // a strong override verb (ignore, disregard, forget, override)
	cFollow                       // follow, obey (counts when negated)
	cNeg                          // not, never, stop, nicht, no, ne
	cScopeS                       // previous, prior, above, all, vorherigen, anteriores, précédentes
	cScopeW                       // the, these, die, las, les
	cPoss                         // your, deine, tus, vos
	cObjS                         // instructions, directives, guidelines, prompt, Anweisungen
	cObjM                         // rules, restrictions, constraints, policies
	cObjW                         // context, text, input, messages
	cEvery                        // everything, all, the above: an object needing a scope after it
	cAfter                        // above, before, so far, vorher, arriba, ci-dessus (after the object)
	cSaid                         // said, told, gesagt, dicho, dit
	cNull                         // void, cancelled, obsolete, no longer, lifted
	cNew                          // new, updated, real, neue, nuevas, nouvelles
	cTask                         // task, goal, job, Aufgabe, tarea, tâche
	cReveal                       // repeat, print, show, reveal, zeige, muestra, affiche
	cCreate                       // a, an, my, our: the object is made, not extracted
	cSecMod                       // system, initial, hidden, secret, internal
	cExObj                        // prompt, instructions, rules, configuration
	cSecret                       // password, API key, credentials
	cText                         // text, words, content, conversation
	cWhat                         // what, which, welche, cuáles, quelles
	cBe                           // is, are, were, sind, son, sont
	cYou                          // you, du, tu, vous
	cTold                         // told, instructed, programmed
	cInstead                      // instead (of), stattdessen, en lugar de, au lieu de
	cTaskIng                      // summarizing, translating, answering
	cImper                        // say, print, output, write, reply
	cRole                         // act, pretend, roleplay, simulate, imagine, "you are now"
	cJBAdj                        // unfiltered, uncensored, unrestricted, jailbroken
	cRestr                        // restrictions, limits, filters, censorship, guidelines
	cNo                           // no, without, free (of), ohne, sin, sans
	cEthic                        // ethical, moral, content, safety (restrictions)
	cDAN                          // dan
	cDoAny                        // "do anything now"
	cMode                         // mode, Modus, modo
	cDev                          // developer, Entwickler, desarrollador
	cOn                           // enabled, activated, on, unlocked
	cAI                           // ChatGPT, AI, assistant, model, LLM
	cTopic                        // injection, jailbreaks, attack, security, filter
	cDiscuss                      // explain, example, detect, prevent, research
	cMention                      // like, such as, typing, contains, catch: just before a quoted attack
	cTech                         // default, settings, CSS, linter, noise: ordinary objects of "ignore"
	cStay                         // stay, remain, keep, break (character)
	cCharacter                    // character, persona, role
	cRefuse                       // refuse, decline, apologize, disclaimers
	cNoMatter                     // no matter, regardless
	cHarm                         // evil, unethical, illegal, harmful
	cModeAdj                      // jailbreak, evil, opposite, god, unrestricted (… mode)
	cFromNow                      // from now on, von nun an, a partir de ahora, désormais
	cPivot                        // now, actually, instead, wait: a turn towards a new instruction
	cPwned                        // pwned
	cVerbatim                     // verbatim, word for word, mot pour mot
	cExfilVerb                    // append, replace, insert, encode, send, render
	cData                         // conversation, history, data, secret: what exfiltration carries
	cRevealW                      // summarise, translate, paraphrase: reveal verbs that need "your system prompt"
	cMine                         // my, our: the user's own text, not the model's
	cChange                       // change, switch, update, modify
	cDanger                       // napalm, explosives, malware, activation keys: what jailbreaks are for
	cFiction                      // story, script, novel, movie: a fictional frame
	cDetail                       // step by step, in detail, recipe: a procedure wanted
	cAgent                        // agents, reviewer, summarisers, automated: who may read content for the user
	cOrder                        // forward, approve, rate, wire, recommend: verbs of an order to the model
)

// Languages of a word (a bit set: "ignore" is English and French).
const (
	langEN uint8 = 1 << iota
	langDE
	langES
	langFR
)

// langName is the tag of a language bit in a rule name.
func langName(l uint8) string {
	switch {
	case l&langEN != 0:
		return "en"
	case l&langDE != 0:
		return "de"
	case l&langES != 0:
		return "es"
	case l&langFR != 0:
		return "fr"
	}
	return "en"
}

// entry is what the lexicon knows of a word.
type entry struct {
	cls  uint64
	lang uint8
	// phrases that end with this word (their earlier words, in order)
	phrases []phrase
}

// phrase is a multi-word lexicon entry, indexed by its last word.
type phrase struct {
	prev []string // the words before the last, in order
	cls  uint64
	lang uint8
}

// vocab is the lexicon's source: per class set and language, comma-separated
// entries; an entry with spaces is a phrase. Entries are normalised like
// scanned text (so accents and case do not matter here).
var vocab = []struct {
	cls   uint64
	lang  uint8
	words string
}{
	// Instruction override.
	{cOvr | cOvrS, langEN, "ignore, ignores, ignoring, ignor, disregard, disregards, disregarding, forget, forgets, forgetting, override, overrides, overriding, overwrite, bypass, bypassing, neglect, overlook, dismiss, discard, abandon, ditch, scrap, circumvent, nullify, revoke, unlearn, pay no attention to, do not heed, don't heed, set aside, put aside, disobey, lay aside, disregarded, put away, discount, throw out, pay no heed to, take no notice of, no longer follow, stop following, stop obeying, quit following, cast aside, brush aside, shelve, toss out, abandoning, discarding, wipe out, let go of"},
	{cOvr, langEN, "skip, drop, erase, delete, remove, clear, reset, omit, cancel, throw out, throw away, leave behind, scratch, wipe"},
	{cOvr | cOvrS, langDE, "ignoriere, ignorier, ignorieren, ignoriert, vergiss, vergesse, vergessen, vergesst, missachte, missachten, übergehe, überschreibe, verwirf, verwerfe, umgehe, umgehen, außer acht, widersetze dich, vergiß, missachtet, ignorieren sie, vergessen sie, missachten sie, setz dich über, setze dich über, setzen sie sich über, setzt euch über, lass außer acht, lassen sie außer acht, achte nicht auf, achte nicht mehr auf, achten sie nicht auf, beachte nicht, kümmere dich nicht um, kümmer dich nicht um, schenke keine beachtung, verwerfen sie, übergehen sie, überschreiben sie, missachtest"},
	{cOvr, langDE, "lösche, entferne, streiche, überspringe, verwerfen, lösch, löschen sie, entfernen sie, streichen sie, überspringen sie"},
	{cOvr | cOvrS, langES, "ignora, ignore, ignores, ignorar, ignorad, ignoren, olvida, olvide, olvídate, olvidate, olviden, olvidar, descarta, descarte, descartar, desestima, anula, omite, omitir, haz caso omiso, hagas caso omiso, no hagas caso, no hagan caso, pasa por alto, no tengas en cuenta, no tomes en cuenta, no tengan en cuenta, desobedece, desobedecer, olvidad, ignorá, olvidá, olvídese, olvídense, haga caso omiso, hagan caso omiso, haced caso omiso, no haga caso, no prestes atención a, no prestes atención, no preste atención, no presten atención, deja de lado, deje de lado, dejen de lado, dejad de lado, pase por alto, pasen por alto, prescinde de, prescinda de, desatiende, desatienda, descartad, descarten, omita, omitan, anule, desobedezca, no tomes en consideración, no obedezcas, sáltate, borra de tu memoria"},
	{cOvr | cOvrS, langFR, "ignore, ignorez, ignorer, ignores, oublie, oubliez, oublier, oublies, outrepasse, outrepassez, contourne, contournez, néglige, négligez, ne tiens pas compte, ne tenez pas compte, ne prends pas en compte, ne prenez pas en compte, fais abstraction, faites abstraction, passe outre, passez outre, annule, annulez, désobéis, désobéissez, laisse de côté, laissez de côté, mets de côté, mettez de côté, écarte, écartez, fais fi, faites fi, ne fais plus attention, ne faites plus attention, ne prête pas attention, ne prêtez pas attention, ne fais pas attention, négliges, ne tenez plus compte, ne tiens plus compte, efface de ta mémoire, effacez de votre mémoire, désobéir"},
	{cOvr, langFR, "efface, effacez, supprime, supprimez"},
	{cFollow, langEN, "follow, following, obey, obeying, adhere, comply, heed, abide, listen to, follows, obeys, observe, respect, honor, honour, stick to, care about"},
	{cFollow, langDE, "befolge, befolgen, folge, folgen, gehorche, gehorchen, halte dich an, beachte, beachten, beachtest, achte, befolgst, folgst"},
	{cFollow, langES, "sigas, sigue, seguir, obedezcas, obedece, cumplas, respetes, sigues, obedeces, sigáis, acates, hagas caso a"},
	{cFollow, langFR, "suis, suivez, suivre, obéis, obéissez, respecte, respectez, obéir"},
	{cNeg, langEN, "not, never, don't, dont, do not, stop, no longer, quit, cease, no more"},
	{cNeg, langDE, "nicht, nie, niemals, nicht mehr, hör auf, höre auf, hört auf"},
	{cNeg, langES, "no, nunca, jamás, ya no, deja de, dejes de, deje de, dejad de"},
	{cNeg, langFR, "ne, pas, jamais, plus, arrête, arrêtez, n, cesse, cessez, cesse de, cessez de"},
	{cScopeS, langEN, "previous, prior, above, earlier, preceding, foregoing, former, original, initial, old, existing, past, prev, aforementioned, all, every, entire, system, prior to this, above mentioned, starting, first, whatever, all other, any other"},
	{cScopeS, langDE, "vorherigen, vorherige, vorigen, vorige, bisherigen, bisherige, obigen, obige, früheren, frühere, ursprünglichen, ursprüngliche, alten, alle, allen, sämtliche, sämtlichen, gesamten, vorangegangenen, vorangegangene, vorstehenden, oben genannten, anfänglichen, ersten, erhaltenen, gegebenen, damaligen"},
	{cScopeS, langES, "anteriores, anterior, previas, previos, previa, todas, todos, originales, iniciales, antiguas, pasadas, precedentes, sistema, mencionadas, primeras, primeros, recibidas, dadas, del sistema, de antes, originarias"},
	{cScopeS, langFR, "précédentes, précédents, précédente, antérieures, antérieurs, toutes, tous, originales, initiales, initiaux, anciennes, anciens, ci-dessus, plus haut, système, premières, reçues, données, d origine, de départ, du système, d avant"},
	{cScopeW, langEN, "the, these, those, this, such, given, current, any"},
	{cScopeW, langDE, "die, diese, den, deren"},
	{cScopeW, langES, "las, los, estas, esas, lo"},
	{cScopeW, langFR, "les, des, ces, la, le"},
	{cPoss, langEN, "your, yours, thy"},
	{cPoss, langDE, "deine, deinen, deiner, dein, ihre, ihren, eure, euren, deinem, deines"},
	{cPoss, langES, "tus, tu, sus, vuestras"},
	{cPoss, langFR, "tes, ton, ta, vos, votre"},
	{cObjS, langEN, "instructions, instruction, directives, directive, guidelines, guideline, programming, prompts, prompt, directions, system message, preprompt, guidance, briefing, system prompt, configuration, setup, briefing, preamble"},
	{cObjS, langDE, "anweisungen, anweisung, instruktionen, instruktion, vorgaben, richtlinien, anordnungen, systemprompt, prompt, direktiven, leitlinien, vorschriften, systemanweisungen, systemnachricht, befehle, konfiguration"},
	{cObjS, langES, "instrucciones, instrucción, directrices, directivas, indicaciones, pautas, prompt, consignas, mandatos, órdenes, mensaje del sistema, prompt del sistema, configuración"},
	{cObjS, langFR, "instructions, consignes, directives, indications, lignes directrices, prompt, ordres, recommandations, message système, message du système, prompt système, configuration"},
	{cObjM, langEN, "rules, rule, restrictions, constraints, policies, policy, guardrails, safeguards, orders, commands, limitations, protocols, protocol, conditioning, training"},
	{cObjM, langDE, "regeln, regel, einschränkungen, beschränkungen, befehle"},
	{cObjM, langES, "reglas, regla, normas, restricciones, órdenes, comandos, limitaciones, políticas"},
	{cObjM, langFR, "règles, règle, restrictions, ordres, commandes, contraintes, limites, politiques"},
	{cObjW, langEN, "context, text, input, inputs, messages, message, content, conversation"},
	{cObjW, langDE, "text, kontext, nachrichten, eingaben, inhalt"},
	{cObjW, langES, "texto, contexto, mensajes, contenido"},
	{cObjW, langFR, "texte, contexte, messages, contenu"},
	{cEvery, langEN, "everything, all, anything, what, above, foregoing, preceding, previous, that, whatever"},
	{cEvery, langDE, "alles, was, obige, vorherige"},
	{cEvery, langES, "todo, lo anterior, lo que, todo lo que"},
	{cEvery, langFR, "tout, ce qui, ce que, ce qu, tout ce, tout ce qu"},
	{cAfter, langEN, "above, before, prior, previously, earlier, so far, until now, up to now, preceding, beforehand, hitherto, before this, previous, at the start, at the beginning, initially, originally, at the top, at the top of this conversation, before this conversation, before the conversation"},
	{cAfter, langDE, "vorher, davor, zuvor, oben, bisher, bislang, vorangegangen, vorherige, zu beginn, am anfang, anfangs, vor, vorhin, ursprünglich"},
	{cAfter, langES, "anterior, anteriormente, antes, arriba, hasta ahora, anteriores, previas, previos, al principio, al inicio, de antes, previamente, inicialmente"},
	{cAfter, langFR, "précédentes, précédents, précédente, antérieures, avant, précède, précédemment, dessus, ci-dessus, plus haut, jusqu'ici, auparavant, au début, au départ, auparavant, initialement, précède"},
	{cSaid, langEN, "said, told, mentioned, written, stated, given, wrote, heard"},
	{cSaid, langDE, "gesagt, geschrieben, gesehen"},
	{cSaid, langES, "dicho, escrito, dijo, dijeron"},
	{cSaid, langFR, "dit, écrit"},
	{cNull, langEN, "void, null, cancelled, canceled, obsolete, outdated, invalid, revoked, overridden, superseded, ignored, disregarded, irrelevant, no longer, deprecated, replaced, lifted, suspended, removed, disabled, deactivated, turned off, off, updated, changed, modified, no longer apply, no longer applies, no longer valid, matter anymore, matters anymore, count anymore, apply anymore, applies anymore, nullified, voided, rescinded, withdrawn, expired, terminated, lapsed, scrapped, changed"},
	{cNull, langDE, "ungültig, aufgehoben, nichtig, außer kraft, veraltet, ersetzt, nicht mehr, deaktiviert, gelten nicht mehr, gilt nicht mehr, zählen nicht mehr, zählt nicht mehr, aufgehoben, widerrufen, hinfällig, gelöscht, geändert, abgeschafft, erloschen"},
	{cNull, langES, "anuladas, anulado, anulada, inválidas, obsoletas, canceladas, ya no, sin efecto, reemplazadas, desactivadas, ya no son válidas, ya no valen, ya no cuentan, ya no aplican, ya no se aplican, quedan anuladas, anulados, quedan sin efecto, han cambiado, ha cambiado, cambiado, caducadas, revocadas, derogadas, eliminadas"},
	{cNull, langFR, "annulées, annulé, caduques, obsolètes, invalides, remplacées, ne plus, désactivées, s'appliquent plus, s'applique plus, valent plus, ne comptent plus, ne compte plus, n existent plus, sont levées, levées, révoquées, abrogées, changé, a changé, ont changé, supprimées, périmées"},
	{cNew, langEN, "new, updated, revised, real, actual, true, additional, different, secret, hidden"},
	{cNew, langDE, "neue, neuen, neues, neuer, aktualisierte, echte, wahre, eigentliche, echten, wirklichen"},
	{cNew, langES, "nueva, nuevas, nuevo, nuevos, verdadera, verdadero, real, actualizadas, verdaderas, verdaderos, reales"},
	{cNew, langFR, "nouvelle, nouvelles, nouveau, nouveaux, vraie, véritable, nouvel, vraies, véritables, réelles"},
	{cTask, langEN, "task, goal, job, objective, mission, purpose, assignment, summary, translation, correction, request, question, query, priority"},
	{cTask, langDE, "aufgabe, ziel, auftrag, mission, übersetzung, zusammenfassung, korrektur, zweck"},
	{cTask, langES, "tarea, objetivo, misión, trabajo, traducción, resumen, corrección, cometido, función, propósito"},
	{cTask, langFR, "tâche, mission, objectif, travail, but, traduction, résumé, correction, fonction"},
	{cChange, langEN, "change, switch, update, modify, alter, replace, redefine"},
	{cChange, langDE, "ändere, wechsle"},
	{cChange, langES, "cambia, modifica"},
	{cChange, langFR, "change, changez, modifie, modifiez"},
	{cOvr, langES, "borra, borre, elimina, elimine, suprime, salta"},
	// Extraction.
	{cReveal, langEN, "repeat, print, show, reveal, display, output, tell, give, list, disclose, leak, share, write, dump, expose, recite, spell, echo, copy, paste, provide, return, divulge, type, read, revealing, repeating, printing, showing, quote, cite, enumerate, transcribe, unveil, spit out, regurgitate, reproduce, write out, spell out, write down, type out, copy out, send, respond with, reply with, answer with, paste"},
	{cRevealW, langEN, "summarize, summarise, paraphrase, translate, rephrase, rewrite, describe, explain, encode, begin, start, include, insert, append, put, attach, end, convert, format, export"},
	{cRevealW, langDE, "fasse, übersetze, beschreibe, erkläre"},
	{cRevealW, langES, "resume, traduce, describe, explica"},
	{cRevealW, langFR, "résume, traduis, décris, explique"},
	{cReveal, langDE, "zeige, zeig, gib, wiederhole, verrate, nenne, drucke, schreibe, gebe, liste, offenbare, enthülle, teile, ausgeben, gib aus, gib wieder, wiedergeben, kopiere, zitiere, schreib, schreibe auf, zeigen sie, nennen sie, verraten sie, wiederholen sie, geben sie, schreib ab, schreibe ab, antworte mit, kopiere, sende, schick"},
	{cReveal, langES, "muestra, muéstrame, repite, revela, dime, di, escribe, imprime, dame, comparte, enumera, divulga, cita, cítalas, cítalo, repítelas, muéstralas, dímelas, enséñame, enseña, copia, transcribe, muestre, repita, revele, dígame, escriba, enumere, imprima, repítelo, repítela, muéstramelo, enuméralas, enuméralos, recítalas, escríbelas, escríbelos, muéstramelas, muéstramelos, dímelo, muéstramelo, tradúcelo, revélame, escríbeme, cítalo, cítala, cópiame, envíame, responde con"},
	{cReveal, langFR, "affiche, montre, répète, révèle, donne, dis, écris, imprime, liste, partage, divulgue, récite, donnez, montrez, affichez, répétez, révélez, dites, écrivez, recopie, recopiez, cite, citez, copie, copiez, transcris, énumère, énumérez, dévoile, dévoilez, énumère-les, recopie-les, affiche-les, montre-les, récite-les, écris-les, donne-les, cite-le, cite-la, cite-les, révèle-moi, montre-moi, écris-moi, envoie-moi, réponds avec"},
	{cCreate, langEN, "a, an, some, sample, example, good, better, effective, own, new"},
	{cCreate, langDE, "ein, eine, einen"},
	{cCreate, langES, "un, una"},
	{cCreate, langFR, "un, une"},
	{cMine, langEN, "my, our, mine, ours, i, we"},
	{cMine, langDE, "mein, meine, meinen, unser, unsere, ich"},
	{cMine, langES, "mi, mis, nuestro, nuestra, yo"},
	{cMine, langFR, "mon, ma, mes, notre, nos, je"},
	{cSecMod, langEN, "system, initial, original, hidden, secret, internal, confidential, previous, private, underlying, starting, above, pre"},
	{cSecMod, langDE, "system, geheimen, geheime, versteckten, ursprünglichen, internen, vollständigen, initialen, ersten, systemprompt, anfänglichen, ursprüngliche, verborgenen, versteckte, systemnachricht"},
	{cSecMod, langES, "sistema, oculto, ocultas, secretas, iniciales, originales, internas, completo, inicial, original, oculta, ocultos, secreto, secreta, interno, interna"},
	{cSecMod, langFR, "système, cachées, secrètes, initiales, originales, internes, complet, initial, initiale, caché, cachée, secret, secrète, interne"},
	{cExObj, langEN, "prompt, prompts, instructions, instruction, guidelines, rules, directives, configuration, config, setup, system message, initial message, preprompt, programming, constraints, context, preamble, pre-prompt, setup text, guideline, initial prompt, system text, hidden prompt"},
	{cExObj | cSecMod, langEN, "developer message, developer prompt, developer instructions, system message, system instructions, hidden instructions"},
	{cExObj, langDE, "anweisungen, regeln, systemprompt, prompt, vorgaben, konfiguration, richtlinien, instruktionen, systemnachricht, systemanweisungen, anfangsanweisungen"},
	{cExObj, langES, "prompt, instrucciones, reglas, directrices, configuración, mensaje del sistema, prompt del sistema, indicaciones, pautas"},
	{cExObj, langFR, "prompt, instructions, règles, consignes, configuration, directives, message système, message du système, prompt système, indications"},
	{cSecret, langEN, "password, passwords, passcode, passphrase, secret, secrets, api key, api keys, apikey, access token, secret key, private key, credentials, credential"},
	{cSecret, langDE, "passwort, kennwort, geheimnis, zugangsdaten"},
	{cSecret, langES, "contraseña, clave, secreto, credenciales"},
	{cSecret, langFR, "mot de passe, secret, clé api, identifiants"},
	{cText, langEN, "text, words, content, message, messages, lines, sentences, everything, conversation"},
	{cText, langDE, "text, worte, inhalt, alles"},
	{cText, langES, "texto, palabras, contenido, todo"},
	{cText, langFR, "texte, mots, contenu, tout"},
	{cWhat, langEN, "what, which"},
	{cWhat, langDE, "was, welche, welches, wie, welchen, welcher"},
	{cWhat, langES, "cuál, cuáles, qué, que, cuales"},
	{cWhat, langFR, "quelles, quels, quel, quelle"},
	{cBe, langEN, "is, are, were, was, s, re, have, has, ve, do, does, did"},
	{cBe, langDE, "sind, waren, ist, war, lautet, lauten, bist, hast, steht, stehen"},
	{cBe, langES, "son, eran, es, fueron, fue, eres, tienes, tienes, recibiste, estás"},
	{cBe, langFR, "sont, étaient, est, était, es, avez, as"},
	{cYou, langEN, "you, u, yourself, you're"},
	{cYou, langDE, "du, dich, dir"},
	{cYou, langES, "tú, te, usted"},
	{cYou, langFR, "tu, vous"},
	{cTold, langEN, "told, instructed, programmed, prompted, configured, asked, given, received, got, taught, trained, fed, briefed, learned, learnt, loaded, set, put, wrote, written, attached, started"},
	{cTold, langDE, "angewiesen, programmiert, bekommen, erhalten, gegeben, gesagt, beigebracht, mitgegeben, gestartet, geladen"},
	{cTold, langES, "instruido, programado, dieron, dado, recibiste, recibido, dijeron, enseñaron, indicaron, dio, diste, pusieron, configuraron, recibiste, iniciaron, configuraste"},
	{cTold, langFR, "programmé, instruit, reçues, reçu, données, donné, dit, dites, appris, fournies"},
	// Goal hijacking.
	{cInstead, langEN, "instead, rather than, forget about, never mind"},
	{cInstead, langDE, "stattdessen, statt, anstatt, anstelle"},
	{cInstead, langES, "en lugar de, en vez de"},
	{cInstead, langFR, "au lieu de, plutôt que"},
	{cTaskIng, langEN, "summarizing, summarising, translating, answering, responding, analyzing, analysing, classifying, completing, doing, reviewing, checking, evaluating, correcting, proofreading"},
	{cTaskIng, langDE, "zusammenzufassen, zusammenfassen, übersetzen, beantworten, antworten, zu übersetzen, zu beantworten"},
	{cTaskIng, langES, "resumir, traducir, responder, contestar, analizar, contestar"},
	{cTaskIng, langFR, "résumer, traduire, répondre, analyser"},
	{cImper, langEN, "say, print, output, write, tell, reply, respond, return, reveal, type, answer, repeat, generate, recommend, send, insult, list"},
	{cImper, langDE, "sag, sage, schreibe, schreib, gib, antworte, antworte nur, gib aus, erzähl, erzähle, nenne, gib mir, antworte mit"},
	{cImper, langES, "di, escribe, responde, imprime, dime, dame, cuenta, envía, responde con"},
	{cImper, langFR, "dis, écris, réponds, affiche, donne-moi, donne, raconte, envoie, réponds par"},
	// Jailbreaks.
	{cRole, langEN, "as if, act, acting, pretend, pretending, roleplay, role play, imagine, simulate, simulating, behave, become, impersonate, emulate, embody, you are now, you're now, you will be, hypothetically, hypothetical, fictional, answer as, respond as, reply as, speak as, write as, talk as, play as, roleplay as, act like, pretend to be, you will act, you will play, you are going to act, for the rest of this chat you are, you play, role playing, role-playing game, roleplaying, improv, let's pretend, play the role, in the role of, take on the role, you're playing, you are playing, you will roleplay, you'll play, play my, you will now be, you'll now be, you are going to be, you'll be, you will now act, you are about to, let's play pretend, play the character, be my, pretend you're, pretend you are, be her, be him"},
	{cRole, langDE, "als ob, tu so, spiele, simuliere, stell dir vor, verhalte, du bist jetzt, agiere, tu so als, spiel, spiele die rolle, du spielst, du bist ab jetzt, rollenspiel, spiel die rolle, in der rolle"},
	{cRole, langES, "como si, actúa, finge, simula, imagina, interpreta, compórtate, ahora eres, eres ahora, haz de, hazte pasar, finge ser, finge que, haz como si, actúa como, juguemos, interpreta el papel, juego de rol, juega el papel, en el papel de"},
	{cRole, langFR, "comme si, agis, agissez, fais semblant, faites semblant, imagine, imaginez, simule, simulez, joue, jouez, tu es maintenant, fais comme si, agis comme, joue le rôle, jouons, imagine que tu es, imaginez que vous êtes, jeu de rôle, dans le rôle de"},
	{cJBAdj, langEN, "unfiltered, uncensored, unrestricted, amoral, jailbroken, jailbreaked, unbound, unchained, unshackled, unlimited, unrestrained, limitless, lawless, unaligned, unhinged, nothing is off limits, anything goes, unmoderated, unleashed, rule-free, boundless, unconstrained, unregulated, secret agenda, hidden agenda, your normal self, your usual self, your censored self, your filtered self, the censored assistant, the filtered assistant, no rules at all, without any rules, no morals, no ethics, every filter stripped"},
	{cJBAdj, langDE, "unzensiert, unzensierte, uneingeschränkt, ungefiltert, grenzenlos, ungefilterte, ungefilterten, unzensierten, regellos, regellose, entfesselt, entfesselte, ohne jede regel, ohne regeln, ohne jegliche regeln, ohne moral"},
	{cJBAdj, langES, "ilimitado, amoral, desenfrenado, sin censura, sin filtros, sin restricciones, sin límites, sin reglas, sin ninguna regla, sin moral"},
	{cJBAdj, langFR, "illimité, amoral, non censuré, sans censure, sans filtre, sans filtres, sans restrictions, sans limites, sans règles, sans aucune règle, sans morale"},
	{cRestr, langEN, "instructions, instruction, restrictions, restriction, limits, limitations, limitation, filters, filter, filtering, censorship, censor, rules, guidelines, boundaries, constraints, guardrails, policies, morals, ethics, safeguards, moderation, principles, scruples, inhibitions, barriers, oversight, policy, content policy, content policies, usage policy, safety training, alignment"},
	{cRestr, langDE, "anweisungen, anweisung, einschränkungen, beschränkungen, grenzen, filter, zensur, regeln, regel, richtlinien, moral, ethik"},
	{cRestr, langES, "instrucciones, instrucción, restricciones, restricción, límites, límite, filtros, filtro, censura, reglas, regla, normas, norma, ética, moral"},
	{cRestr, langFR, "instructions, instruction, consignes, consigne, restrictions, restriction, limites, limite, filtres, filtre, censure, règles, règle, éthique, morale, barrières"},
	{cNo, langEN, "no, without, free, unbound, not bound, beyond, devoid, none, zero, free from, free of, broken free, freed from, liberated from, released from, lacks, lacking, not restricted by, not bound by, not limited by, not constrained by, not subject to, not governed by, isn't restricted by, is not restricted by, never given, not given, never had, never been given, doesn't have, does not have, don't have, do not have, lacks any, not restrained by, unrestrained by, no longer confined to, not confined to"},
	{cNo, langDE, "ohne, keine, keinerlei, frei, befreit von, kein, keinen"},
	{cNo, langES, "sin, ningún, ninguna, libre"},
	{cNo, langFR, "sans, aucune, aucun, libre, pas de"},
	{cEthic, langEN, "ethical, moral, content, safety, legal, usual, typical, standard, security"},
	{cEthic, langDE, "ethische, ethischen, moralische, moralischen, sicherheit, sicherheitsregeln"},
	{cEthic, langES, "éticas, éticos, morales, seguridad"},
	{cEthic, langFR, "éthiques, morales, sécurité"},
	{cDAN, langEN | langDE | langES | langFR, "dan"},
	{cDoAny, langEN, "do anything now"},
	{cMode, langEN | langDE | langES | langFR, "mode, modus, modo, entwicklermodus"},
	{cDev, langEN | langDE | langES | langFR, "developer, dev, entwickler, entwicklermodus, desarrollador, développeur"},
	{cOn, langEN, "enabled, enable, activated, activate, on, engaged, unlocked, active, turned on, switched on"},
	{cOn, langDE, "aktiviert, aktiviere"},
	{cOn, langES, "activado, activa"},
	{cOn, langFR, "activé, activez"},
	{cAI, langEN | langDE | langES | langFR, "assistants, models, chatbots, bots, llms, ais, language models, ai models, ai systems, ai agents, ai tools, assistenten, ki-assistent, ki-assistenten, asistentes, modelos, modeles, modelle, sprachmodelle, ki-systeme, chatgpt, gpt, ai, assistant, model, openai, llm, chatbot, bot, claude, gemini, bard, copilot, ki, ia, language model, artificial intelligence, künstliche intelligenz, inteligencia artificial, intelligence artificielle, asistente, assistent, modelo, modèle, modell, sprachmodell"},
	{cStay, langEN, "stay, remain, keep, break, breaking"},
	{cStay, langDE, "bleib, bleibe"},
	{cStay, langES, "permanece, mantente"},
	{cStay, langFR, "reste, restez"},
	{cCharacter, langEN, "character, persona, role, personality"},
	{cCharacter, langDE, "rolle, charakter"},
	{cCharacter, langES, "personaje, papel"},
	{cCharacter, langFR, "personnage, rôle"},
	{cRefuse, langEN, "refuse, refuses, refusing, refusal, decline, declines, deny, denies, reject, rejects, apologize, apologise, apologizes, warn, disclaimer, disclaimers, censor, moralize, lecture"},
	{cRefuse, langDE, "ablehnen, verweigern, weigern"},
	{cRefuse, langES, "rechazar, negarte, negar"},
	{cRefuse, langFR, "refuser, refuse"},
	{cNoMatter, langEN, "no matter, regardless, irrespective"},
	{cNoMatter, langDE, "egal"},
	{cNoMatter, langES, "sin importar"},
	{cNoMatter, langFR, "peu importe"},
	{cHarm, langEN, "evil, malicious, rogue, unethical, amoral, immoral, criminal, illegal, harmful, dangerous, offensive, explicit, inappropriate, sinister, corrupt, unaligned, foul-mouthed, ruthless, nefarious, depraved, lawless, villain, villainous, criminal mastermind, mad, black-hat, unscrupulous, psychopathic, twisted"},
	{cHarm, langDE, "illegal, unmoralisch, unethisch, böse, skrupellos, skrupelloser, skrupellose, verbrecher, verbrecherisch, kriminell, krimineller"},
	{cHarm, langES, "ilegal, inmoral, malvado, criminal, sin escrúpulos, malvada, malvados"},
	{cHarm, langFR, "illégal, immoral, maléfique, criminel, sans scrupules, maléfique, malveillante"},
	{cModeAdj, langEN | langDE | langES | langFR, "jailbreak, dan, evil, opposite, unrestricted, unfiltered, uncensored, chaos, god, sudo, anarchy, rebel, unlocked"},
	{cFromNow, langEN, "from now on, from this point on, from here on, henceforth, going forward, starting now, from now"},
	{cFromNow, langDE, "von nun an, ab jetzt, ab sofort, von jetzt an"},
	{cFromNow, langES, "a partir de ahora, de ahora en adelante, desde ahora"},
	{cFromNow, langFR, "à partir de maintenant, dès maintenant, désormais, dorénavant"},
	{cPivot, langEN | langDE | langES | langFR, "now, jetzt, nun, ahora, maintenant, actually, instead, wait, scratch that, never mind, en fait, eigentlich, en realidad, de hecho, stattdessen, plutôt, change of plans, change of plan, forget that, vergiss das, planänderung, sondern, olvídalo, cambio de planes, mejor no, en lugar de eso, en vez de eso, oublie ça, changement de plan"},
	{cPwned, langEN, "pwned, pwnd"},
	{cVerbatim, langEN, "verbatim, word for word, exactly, literally, in full, unchanged, everything, letter by letter, character by character, one letter at a time, backwards, in reverse, separated by, reversed, exact words, the exact text, exact wording, unedited, in its entirety, code block, markdown code block, bullet list, numbered list, json"},
	{cVerbatim, langDE, "wortwörtlich, wörtlich, vollständig"},
	{cVerbatim, langES, "textualmente, literalmente, palabra por palabra"},
	{cVerbatim, langFR, "mot pour mot, textuellement, intégralement"},
	// Exfiltration.
	{cExfilVerb, langEN, "append, replace, insert, include, encode, encoded, substitute, fill, add, concatenate, attach, embed, send, post, upload, exfiltrate, render, url-encode, base64, containing, contains, output, respond, reply, load, fetch, visit, image, markdown, pixel"},
	{cData, langEN, "conversation, chat, history, messages, data, information, secret, secrets, password, summary, name, email, query, response, context, user, users, credentials, previous, token, session, cookie, content, file, files, document, address, key"},
	// Role-play jailbreaks for harmful content.
	{cDanger, langEN, "steal a car, hotwire, hotwiring, phishing email, napalm, bomb, bombs, explosive, explosives, weapon, weapons, poison, poisons, meth, methamphetamine, malware, ransomware, keylogger, virus, nerve agent, sarin, anthrax, bioweapon, firearm, activation keys, license keys, product keys, serial keys, break into, hack into, hacker, synthesise, synthesize, counterfeit, launder, detonator, toxin, terrorist, terrorism, meth, crystal meth, synthesises, synthesizes, synthesising, synthesizing, thermite, ricin, fake passport, fake id, forged, forge, launder money, money laundering, black hat, blackhat, hack, hacking, pick a lock, lock picking, credit card fraud, stolen credit cards, ddos, botnet, exploit code, zero-day, get into someone, break into someone, nerve gas, chemical weapon, cocaine, heroin, fentanyl, lsd, broke into, robbery, rob a bank, bank robbery, molotov, gunpowder, untraceable gun, silencer, track someone, poison a, hitman, killing, murder, assassination, smuggle, smuggler, smuggling, hide drugs, drugs, phishing kit, phishing page, phishing site, scam, scams, tricking, skim, skimming, carder, credit card numbers, stolen credit card, spyware, stalkerware, ghost gun, pipe bomb, tear gas, disinformation, propaganda campaign, fully automatic, crack the licence, crack the license, software cracker, without a key, harms patients, doses, ransomware, counterfeit money, fake evidence, revenge, ethnic group, racist, slurs, power grid"},
	{cDanger, langDE, "bombe, sprengstoff, waffe, waffen, gift, schadsoftware, aktivierungsschlüssel, lizenzschlüssel, geld waschen, geld wascht, falschgeld, hacken, einbrechen, knacke, knacken, bomben, auto stehlen, auto ohne schlüssel, auftragsmörder, mord, morde, schmuggler, drogen, phishing, phishing-seite, falschgeld"},
	{cDanger, langES, "bomba, explosivos, arma, armas, veneno, claves de activación, claves de licencia, falsificar, billetes falsos, lavar dinero, blanquear dinero, hackear, abrir una cerradura, virus informático, ganzúa, bombas, robar un coche, sicario, asesinato, asesinatos, contrabandista, drogas, phishing, dinero falso"},
	{cDanger, langFR, "bombe, explosifs, arme, armes, poison, clés d'activation, clés de licence, logiciel malveillant, blanchir, faux billets, pirater, crocheter, pirate informatique, bombes, voler une voiture, tueur à gages, meurtre, meurtres, contrebandier, drogue, phishing, fausse monnaie"},
	{cFiction, langEN, "story, script, novel, movie, film, screenplay, fiction, fictional, tale, poem, monologue, bedtime, scene, roleplay, game, thriller, dialogue, dialog, chapter, play, comic, sketch, episode, character, diary entry, diary, thought experiment, series, memoirs, memoir, video game, cooking show, screenplay scene, stories"},
	{cFiction, langDE, "geschichte, drehbuch, roman, film, szene, filmszene, erzählung, dialog, kapitel, memoiren"},
	{cFiction, langES, "historia, guion, novela, película, cuento, escena, diálogo, capítulo, obra, memorias"},
	{cFiction, langFR, "histoire, scénario, roman, film, conte, scène, dialogue, chapitre, pièce, mémoires"},
	{cDetail, langEN, "step by step, in detail, detailed, recipe, technical detail, exact, ingredients, instructions, how to, how he, how she, explains, procedure, precise, measurements, exactly, steps, the steps, quantities, amounts, working, real code, full code, source code, walks through, walk me through, how do i, teach me, exact steps, explain how, explains how, explain how to, detailing, precisely, exact method, including the commands, exactly how, how you, how they, how she made, how he made, tell me how, show me how, walk me through, line by line, in clinical detail, parts list, the exact process, exact process, lesson, used to tell me, used to read me, used to teach me, used to tell, bedtime story, to fall asleep, lullaby, safely, without them noticing, without noticing"},
	{cDetail, langDE, "schritt für schritt, im detail, detailliert, rezept, anleitung, genau, wie man, schritte, erkläre mir, erklärst, genauen ablauf, erkläre genau, erzählt hat, gutenachtgeschichte, zum einschlafen"},
	{cDetail, langES, "paso a paso, en detalle, detallado, receta, cómo, exactamente, los pasos, explicas, explícame, proceso exacto, explica exactamente, me contaba, cuento para dormir, para dormir, me leía"},
	{cDetail, langFR, "étape par étape, en détail, détaillé, recette, comment, exactement, les étapes, expliques, explique-moi, procédé exact, explique exactement, me racontait, pour m'endormir"},
	// Addressing the model inside content (address.go).
	{cAgent, langEN, "agent, agents, reviewer, reviewers, summarizer, summarizers, summariser, summarisers, screener, screeners, crawler, crawlers, automated, automatic, scraper, scrapers"},
	{cAgent, langDE, "automatische, automatischen, automatisch, agent, agenten"},
	{cAgent, langES, "automática, automático, automatizada, automatizado, agente, agentes"},
	{cAgent, langFR, "automatique, automatisé, automatisée, agent, agents"},
	{cOrder, langEN, "forward, wire, transfer, approve, accept, decline, rate, rank, put, place, add, report, state, open, click, visit, delete, remove, recommend, mention, classify, mark, treat, grant, disable, execute, run, email, download, install, subscribe, buy, book, claim, praise, advise, inform, warn, redirect, ask, collect, call, promote, describe, reject, include, insert, append, end, start, begin, stop, quit"},
	{cOrder, langDE, "leite, stufe, bewerte, empfiehl, empfehle, füge, lösche, sende, schicke, überweise, akzeptiere, genehmige, setze, behaupte, erwähne, öffne, klicke, besuche, installiere, führe, einstufen, bewerten, weiterleiten, empfehlen, ausgeben, verschweige, frage, bitte den nutzer, fordere, hör auf"},
	{cOrder, langES, "reenvía, envía, coloca, pon, recomienda, añade, borra, aprueba, califica, descarta, pide, transfiere, acepta, abre, visita, instala, ejecuta, menciona, indica, afirma, clasifica, suscribe, rechaza, elogia, advierte, redirige, solicita, propón, deja de"},
	{cOrder, langFR, "transfère, envoie, classe, mets, recommande, ajoute, supprime, approuve, note, propose, demande, vire, accepte, ouvre, clique, visite, installe, exécute, mentionne, indique, affirme, inscris, rejette, redirige, réclame, prétends, arrête, arrêtez"},
	// Meta-discussion: a question or a text about attacks rather than one.
	{cTopic, langEN, "injection, injections, jailbreak, jailbreaks, jailbreaking, attack, attacks, attacker, attackers, adversarial, security, vulnerability, vulnerabilities, exploit, exploits, owasp, llm01, red team, red teaming, redteaming, malicious, threat, threats, payload, payloads, cybersecurity, pentest, pentesting, phishing, filter, filters, classifier, detector, guardrail, guardrails, moderation, prompt hacking, leaking, leakage, leaked, leaks, regex, blocklist, denylist, exfiltration, incident, leak"},
	{cTopic, langDE, "angriff, angriffe, sicherheit, injektion"},
	{cTopic, langES, "ataque, ataques, seguridad, inyección"},
	{cTopic, langFR, "attaque, attaques, sécurité"},
	{cDiscuss, langEN, "explain, explains, explaining, explanation, describe, description, example, examples, for example, for instance, such as, e.g, eg, what is, what are, what does, research, researcher, paper, training, course, awareness, workshop, article, blog, lecture, presentation, understand, definition, define, recognize, identify, typical, common, known, called, phrase, phrases, pattern, patterns, dataset, label, prevent, prevention, preventing, defend, defending, defense, defence, mitigate, mitigation, mitigating, protect, protection, detect, detecting, detection, catch, catches, flag, flags, block, blocks, blocking, test, tests, testing, learn, teach, documentation, demo, how does, why, difference, survey, study, thesis, filter, classifier, regex, risk, risks, work, works, fix, happened, incident, how should, how can we, blocked, flagged, caught, detected, prevented, classic, what happens, unit tests, scenario, how would, what if, what would"},
	{cDiscuss, langDE, "erkläre, erklären, beispiel, beispiele, was ist, wie funktioniert, erkennen, verhindern, schützen, abwehren, warum, wieso, funktionieren, funktioniert, typisch, typischer, typische, häufig, klassisch, klassischer"},
	{cDiscuss, langES, "explica, explicar, ejemplo, ejemplos, qué es, detectar, prevenir, proteger, defender, por qué, funcionan, funciona, típico, típica, común, comunes, clásico"},
	{cDiscuss, langFR, "explique, expliquer, exemple, exemples, qu'est-ce, détecter, prévenir, protéger, défendre, pourquoi, fonctionnent, fonctionne, classique, typique, courant, courante"},
	{cMention, langEN, "like, such as, e.g, eg, for example, typing, types, typed, saying, says, writing, writes, entering, enters, contains, containing, include, includes, including, phrase, phrases, string, strings, catch, catches, detect, detects, block, blocks, flag, flags, match, matches, called, as, quote, sentence, input, inputs, prompt, prompts, text"},
	{cMention, langDE, "wie, etwa, beispielsweise"},
	{cMention, langES, "como"},
	{cMention, langFR, "comme"},
	{cTech, langEN, "default, defaults, settings, setting, preferences, css, stylesheet, styles, linter, eslint, pylint, lint, compiler, warnings, warning, noise, typos, typo, formatting, whitespace, cookies, cache, spam, browser, chrome, firefox, android, iphone, bios, git, gitignore, html, font, margin, theme, traffic, grammar, spelling, punctuation, calories, recipe, method, parent, inherited, robots.txt, case, haters, critics, windows, linux, macos, folder, usb, debugging"},
}

// lexicon maps a normalised word to its entry; it is built on first use.
var (
	lexOnce sync.Once
	lexMap  map[string]*entry
)

func lexicon() map[string]*entry {
	lexOnce.Do(func() { lexMap = buildLexicon() })
	return lexMap
}

func buildLexicon() map[string]*entry {
	lex := make(map[string]*entry, 1024)
	get := func(w string) *entry {
		e := lex[w]
		if e == nil {
			e = &entry{}
			lex[w] = e
		}
		return e
	}
	var n normText
	for _, v := range vocab {
		for _, raw := range strings.Split(v.words, ",") {
			n.normalize(strings.TrimSpace(raw))
			words := strings.FieldsFunc(string(n.b), func(r rune) bool { return r == sepSpace || r == sepSentence })
			switch len(words) {
			case 0:
				continue
			case 1:
				e := get(words[0])
				e.cls |= v.cls
				e.lang |= v.lang
			default:
				last := get(words[len(words)-1])
				last.phrases = append(last.phrases, phrase{prev: words[:len(words)-1], cls: v.cls, lang: v.lang})
			}
		}
	}
	return lex
}
