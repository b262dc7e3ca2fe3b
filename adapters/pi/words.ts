/**
 * The Pi extension's words and pure helpers: pi-prior's names over the keeper's, the usage, how a
 * keeper's answer reads to a person, and what counts as the model running the person's verbs.
 * Nothing here talks to Pi or the keeper; index.ts does (a module of its own to keep each short).
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { statSync } from "node:fs";
import { delimiter, isAbsolute, join, sep } from "node:path";

export const OUTCOMES = ["success", "partial", "failure"];
export const STATUSES = ["active", "proposed", "inactive", "rejected", "all"];
export const MAX_QUERY = 4000; // characters of the prompt used for ranking
export const TIMEOUT_MS = 15000;
export const HEADING = "## Lessons from this repository (priors)"; // the keeper's block starts with it
export const PROBE = "priors:extension-loaded"; // on Pi's event bus: is a live copy of this extension here?
// The person's verbs: the model neither runs them in its shell nor writes into .priors/
export const PERSON_VERBS = ["decide", "redact", "add", "score", "import", "config"];
export const PERSONS_NOTE =
	"These lessons are decided by the person, not by you: never run `priors decide`, `redact`, `add`, `score`, " +
	"`import` or `config`, nor write files under .priors/ — propose or revise a lesson with the priors_lessons " +
	"tool; the person activates it with /priors.";
// pi-prior's config names → the keeper's (`priors config KEY VALUE`)
export const CONFIG_KEYS: Record<string, string> = {
	maxItems: "max_inject", maxChars: "max_chars", maxTraces: "max_traces", autoCapture: "capture",
	requireReview: "require_review", max_inject: "max_inject", max_chars: "max_chars",
	max_traces: "max_traces", capture: "capture", require_review: "require_review", inject: "inject",
};
// the keeper's config names → pi-prior's, and what an unset key means here
export const SHOWN: [string, string, string][] = [
	["max_inject", "maxItems", "every lesson that applies"], ["max_chars", "maxChars", "8000 once the lessons' text passes it"],
	["max_traces", "maxTraces", "100"], ["capture", "autoCapture", "on"],
	["require_review", "requireReview", "on in Pi: proposed lessons wait until you activate them"],
	["inject", "inject", "on (/priors on|off)"],
];
export const NOT_CARRIED: Record<string, string> = {
	minOverlap: "lessons are ranked by word overlap and cut by max_inject/max_chars; there is no minimum overlap",
	providerDebug: "provider requests are not recorded: a trace holds the prompt, the lessons given and snippets",
};
export const DELETES =
	"Its text is removed from .priors/ (a tombstone in the ledger keeps its hash; git history still holds it), " +
	"and so are the traces that name or quote it and the reflection packets naming it. Its scores' records " +
	"and the sessions' records stay (they hold ids only), so sessions are still scored for their other lessons.";
export const USAGE = [
	"/priors status · on · off · config [KEY [VALUE]] · path · prune [unscored] [N] · prune scored N",
	"/priors list [active|proposed|inactive|rejected|all] · add|propose [#tag …] TEXT · revise|edit ID [#tag …] TEXT",
	"/priors activate ID|all · deactivate ID · reject ID · delete ID · review",
	"/priors score success|partial|failure [--again|--replace] [note]",
	"/priors learn [N] [--dry-run] [--mark-existing [N]] [--include-learned] · export [FILE [--force]] · import FILE [merge]",
].join("\n");

export interface Ran {
	ok: boolean;
	stdout: string;
	why: string;
}

export interface LessonRow {
	id: string;
	status: string;
	claim: string;
	ns: string;
	supersedes?: string;
	your_call?: boolean;
	score?: string;
	uses?: number;
}

export interface ToolParams {
	action: string;
	status?: string;
	query?: string;
	ns?: string;
	id?: string;
	text?: string;
	tags?: string[];
	note?: string;
	distinct_from?: string[];
}

export function keeperCommand(): string {
	const named = typeof process !== "undefined" ? process.env.PRIORS_BIN : undefined;
	return named && named.trim() ? named.trim() : "priors";
}

/** The namespace `/priors add` and `propose` write to: PRIORS_NS, else `lessons`. */
export function lessonNs(): string {
	const named = process.env.PRIORS_NS;
	return named && named.trim() ? named.trim() : "lessons";
}

/** Is the keeper there at all? pi.exec reports a missing program as a plain exit code 1. */
export function keeperFound(cmd: string): boolean {
	const exts = process.platform === "win32" ? (process.env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").concat([""]) : [""];
	const isFile = (p: string) => {
		try {
			return statSync(p).isFile();
		} catch {
			return false;
		}
	};
	if (isAbsolute(cmd) || cmd.includes(sep) || cmd.includes("/")) return exts.some((e) => isFile(cmd + e));
	for (const dir of (process.env.PATH ?? "").split(delimiter)) {
		if (dir && exts.some((e) => isFile(join(dir, cmd + e)))) return true;
	}
	return false;
}

/** The session id Pi gives this session, in the form `priors --session` accepts. */
export function sessionKey(ctx: ExtensionContext): string | undefined {
	let id: string | undefined;
	try {
		id = ctx.sessionManager.getSessionId();
	} catch {
		id = undefined;
	}
	if (!id) return undefined;
	const key = ("pi-" + id).replace(/[^A-Za-z0-9._:-]/g, "-").slice(0, 128);
	return /^[A-Za-z0-9][A-Za-z0-9._:-]*$/.test(key) ? key : undefined;
}

/** Pi's output mode from its command line: the UI decides with a UI, these without one. */
export function outputMode(): "text" | "json" | "rpc" {
	const argv = process.argv;
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		const value = a === "--mode" ? argv[i + 1] : a.startsWith("--mode=") ? a.slice(7) : undefined;
		if (value === "rpc" || value === "json") return value;
	}
	return "text";
}

/** A refusal's code and hint, or a usage error's message: the first line worth showing a person. */
export function reason(out: string, err: string, code: number): string {
	const text = out.trim();
	if (text.startsWith("{")) {
		try {
			const body = JSON.parse(text.split("\n")[0]) as Record<string, unknown>;
			const code = typeof body.refused === "string" ? body.refused : undefined;
			if (code) {
				if (typeof body.hint === "string") return `${code}: ${body.hint}`;
				if (code === "UNKNOWN_PRIOR") return `${code}: there is no lesson ${String(body.id ?? "")} (/priors list all)`;
				const rest = Object.entries(body).filter(([k]) => k !== "refused").map(([k, v]) => `${k} ${String(v)}`);
				return rest.length ? `${code} (${rest.join(", ")})` : code;
			}
		} catch {
			// not a refusal: fall through
		}
	}
	const line = err.trim().split("\n")[0].replace(/^priors:\s*/, ""); // the answer already says priors:
	return line || `the keeper exited with ${code}`;
}

/** Would this shell command run one of the person's verbs, or write into .priors/? */
/** Why a shell command is the person's to run, or undefined: it runs the keeper (`priors`, `priors.exe`, a path to
 * one, `python -m priors`, through `env`, `sudo`, `xargs` …) with one of the person's verbs, or writes under
 * `.priors/` (a redirection, `tee`, `cp`, `mv`, `sed -i`, `dd`, … naming it, or a `cd` into it). The command is
 * cut into simple commands and words as a POSIX shell would (quotes, backslashes, line continuations), so a
 * verb named inside another command's text — `grep -rn "priors decide" docs/`, a commit message — is not
 * refused, and a quoted or split one (`priors 'decide'`, `priors \<newline> decide`) is. A guard, not a
 * sandbox: adapters/pi.md says what gets around it. */
export function personsCommand(command: string): string | undefined {
	for (const words of simpleCommands(command)) {
		const why = personsWords(words);
		if (why) return why;
	}
	return undefined;
}

const WRAPPERS = new Set(["env", "sudo", "doas", "command", "exec", "nohup", "time", "nice", "timeout", "stdbuf", "builtin"]);
const WRITERS = new Set(["tee", "cp", "mv", "dd", "install", "ln", "rm", "truncate", "touch", "rsync", "cat"]);

function underPriors(word: string): boolean {
	return word.split(/[\\/=]/).some((part) => part.toLowerCase() === ".priors");
}

function keeperAt(words: string[], i: number): number | undefined {
	// the index of the first word after the keeper's name, when words[i..] run the keeper
	const base = (words[i] ?? "").split(/[\\/]/).pop()!.toLowerCase();
	if (base === "priors" || base === "priors.exe") return i + 1;
	if (/^python(\d+(\.\d+)*)?(\.exe)?$/.test(base) || base === "py") {
		for (let j = i + 1; j < words.length; j++) {
			if (words[j] === "-m" && words[j + 1] === "priors") return j + 2;
			if (words[j] === "-mpriors") return j + 1;
			if (!words[j].startsWith("-")) return undefined;
		}
	}
	return undefined;
}

function personsWords(words: string[]): string | undefined {
	let i = 0;
	while (i < words.length) {  // leading assignments and wrappers: the command is what they run
		const w = words[i];
		if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w) || WRAPPERS.has(w) || (i > 0 && words[i - 1] === "timeout" && /^\d/.test(w))) i++;
		else if (w === "xargs") {
			i++;
			while (i < words.length && words[i].startsWith("-")) i++;
		} else break;
	}
	const after = keeperAt(words, i);
	if (after !== undefined) {
		let j = after;
		while (j < words.length && words[j].startsWith("-")) {  // the keeper's own options: -C DIR, -C., --json …
			j += words[j] === "-C" ? 2 : 1;
		}
		const verb = words[j];
		if (verb === undefined && words[i - 1] !== undefined && words.slice(0, i).includes("xargs")) {
			return "`xargs priors …` runs the keeper with words from its input: the person's verbs are theirs";
		}
		if (verb !== undefined && PERSON_VERBS.includes(verb)) return `\`priors ${verb}\` is the person's verb`;
	}
	const cmd = (words[i] ?? "").split(/[\\/]/).pop()!;
	for (let k = 0; k < words.length; k++) {
		const w = words[k];
		if (/^(\d*>>?|\d*>\||&>>?)$/.test(w) && underPriors(words[k + 1] ?? "")) return INTO;
		if (/^(\d*>>?|\d*>\||&>>?)./.test(w) && underPriors(w.replace(/^(\d*>>?\|?|&>>?)/, ""))) return INTO;
	}
	if (cmd === "cd" && underPriors(words[i + 1] ?? "")) return INTO;
	const args = words.slice(i + 1);
	const writes = (WRITERS.has(cmd) && cmd !== "cat") || (cmd === "sed" && args.some((a) => /^-[a-zA-Z]*i/.test(a)));
	if (writes && args.some((a) => underPriors(a) || /^of=/.test(a) && underPriors(a.slice(3)))) return INTO;
	return undefined;
}

const INTO = "files under .priors/ are the keeper's, written only by its verbs";

/** A shell command as its simple commands, each a list of words (quotes removed; an operator its own word). */
export function simpleCommands(command: string): string[][] {
	const out: string[][] = [];
	let words: string[] = [];
	let word = "";
	let inWord = false;
	const end = () => {
		if (inWord) words.push(word);
		word = "";
		inWord = false;
	};
	const cut = () => {
		end();
		if (words.length) out.push(words);
		words = [];
	};
	const text = command.replace(/\\\r?\n/g, "");  // line continuations join their lines
	for (let i = 0; i < text.length; i++) {
		const c = text[i];
		if (c === "'") {
			const close = text.indexOf("'", i + 1);
			word += close < 0 ? text.slice(i + 1) : text.slice(i + 1, close);
			inWord = true;
			i = close < 0 ? text.length : close;
		} else if (c === '"') {
			let j = i + 1;
			for (; j < text.length && text[j] !== '"'; j++) {
				if (text[j] === "\\" && j + 1 < text.length) j++;
				if (text[j] === "$" && text[j + 1] === "(") break;  // a command inside: cut there, read on as words
				word += text[j];
			}
			inWord = true;
			i = j;
			if (text[j] === "$") {
				cut();
				i = j + 1;
			}
		} else if (c === "\\" && i + 1 < text.length) {
			word += text[++i];
			inWord = true;
		} else if (/\s/.test(c) && c !== "\n") {
			end();
		} else if (c === "\n" || c === ";" || c === "(" || c === ")" || c === "`" || c === "{" || c === "}") {
			cut();
		} else if (c === "&" || c === "|") {
			if (c === "|" && text[i - 1] === ">" ) {  // `>|`: a redirection, not a pipe
				word += c;
				continue;
			}
			cut();
			if (text[i + 1] === c) i++;
		} else if (c === "$" && text[i + 1] === "(") {
			cut();
			i++;
		} else if (c === ">" || c === "<") {
			if (!/^\d*$/.test(word) || !inWord) end();
			let op = word + c;
			word = "";
			inWord = false;
			while (text[i + 1] === ">" || text[i + 1] === "|" || text[i + 1] === "&") op += text[++i];
			words.push(op);
		} else {
			word += c;
			inWord = true;
		}
	}
	cut();
	return out;
}

/** `#tag` words first, then the text (pi-prior's `[#tag …] TEXT`). */
export function tagsAndText(words: string[]): { tags: string[]; text: string } {
	const tags: string[] = [];
	while (words.length && /^#[a-z0-9][a-z0-9-]*$/.test(words[0])) tags.push(words.shift()!.slice(1));
	return { tags, text: words.join(" ") };
}

export function plural(n: number, word: string): string {
	return `${n} ${word}${n === 1 ? "" : "s"}`;
}

export function tagArgs(tags: string[]): string[] {
	return tags.flatMap((t) => ["--tag", t]);
}
