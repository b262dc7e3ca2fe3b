/**
 * priors for Pi: the repository's lessons in every prompt, and the human's side of the loop.
 *
 * A thin layer over the `priors` command, which stays the single source of truth:
 *   - before_agent_start: `priors lessons --inject --query <prompt> --session <id>`; the block it
 *     prints is appended to the system prompt for that turn (advisory, ranked and budgeted by the
 *     keeper exactly as `priors relevant` ranks lessons). Any keeper failure leaves the prompt
 *     unchanged and says why in Pi's notice area.
 *   - /priors score success|partial|failure [--again|--replace] [note]  → `priors score last …`
 *   - /priors review   proposed (open) lessons one by one: accept, retire or skip → `priors decide`
 *   - /priors status   → `priors status --calls`
 * The keeper is `priors` on PATH, or the command named by PRIORS_BIN.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";

const OUTCOMES = ["success", "partial", "failure"];
const MAX_QUERY = 4000; // characters of the prompt used for ranking
const TIMEOUT_MS = 15000;

interface Ran {
	ok: boolean;
	stdout: string;
	why: string;
}

interface LessonRow {
	id: string;
	status: string;
	claim: string;
	ns: string;
}

function keeperCommand(): string {
	const named = typeof process !== "undefined" ? process.env.PRIORS_BIN : undefined;
	return named && named.trim() ? named.trim() : "priors";
}

/** The session id Pi gives this session, in the form `priors lessons --session` accepts. */
function sessionKey(ctx: ExtensionContext): string | undefined {
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

/** A refusal's hint or a usage error's message: the first line worth showing a person. */
function reason(out: string, err: string, code: number): string {
	const text = out.trim();
	if (text.startsWith("{")) {
		try {
			const body = JSON.parse(text.split("\n")[0]) as { refused?: string; hint?: string };
			if (body.refused) return body.hint ? `${body.refused}: ${body.hint}` : body.refused;
		} catch {
			// not a refusal: fall through
		}
	}
	const line = err.trim().split("\n")[0];
	return line || `the keeper exited with ${code}`;
}

export default function priors(pi: ExtensionAPI): void {
	let lastWarning = "";

	async function run(ctx: ExtensionContext, args: string[]): Promise<Ran> {
		try {
			const r = await pi.exec(keeperCommand(), args, { cwd: ctx.cwd, timeout: TIMEOUT_MS });
			if (r.killed) return { ok: false, stdout: "", why: "the keeper took too long" };
			if (r.code !== 0) return { ok: false, stdout: r.stdout, why: reason(r.stdout, r.stderr, r.code) };
			return { ok: true, stdout: r.stdout, why: "" };
		} catch (e) {
			return { ok: false, stdout: "", why: `cannot run ${keeperCommand()} (${e instanceof Error ? e.message : String(e)})` };
		}
	}

	function warnOnce(ctx: ExtensionContext, message: string): void {
		if (message === lastWarning) return; // the same trouble on every prompt is said once
		lastWarning = message;
		ctx.ui.notify(message, "warning");
	}

	pi.on("before_agent_start", async (event, ctx) => {
		const args = ["lessons", "--inject"];
		const prompt = typeof event.prompt === "string" ? event.prompt.trim() : "";
		if (prompt) args.push("--query", prompt.slice(0, MAX_QUERY));
		const key = sessionKey(ctx);
		if (key) args.push("--session", key);
		const r = await run(ctx, args);
		if (!r.ok) {
			warnOnce(ctx, `priors: lessons not added to this prompt — ${r.why}`);
			return undefined;
		}
		lastWarning = "";
		const block = r.stdout.trim();
		if (!block) return undefined;
		return { systemPrompt: `${event.systemPrompt}\n\n${block}` };
	});

	async function score(words: string[], ctx: ExtensionContext): Promise<void> {
		const outcome = words.shift() ?? "";
		if (!OUTCOMES.includes(outcome)) {
			ctx.ui.notify("usage: /priors score success|partial|failure [--again|--replace] [note]", "warning");
			return;
		}
		const args = ["score", "last", outcome];
		const note: string[] = [];
		for (const w of words) {
			if (w === "--again" || w === "--replace") args.push(w);
			else note.push(w);
		}
		if (note.length) args.push("--because", note.join(" "));
		const r = await run(ctx, args);
		ctx.ui.notify(r.ok ? `priors: ${r.stdout.trim()}` : `priors: not scored — ${r.why}`, r.ok ? "info" : "warning");
	}

	async function review(ctx: ExtensionContext): Promise<void> {
		const r = await run(ctx, ["lessons", "--json"]);
		if (!r.ok) {
			ctx.ui.notify(`priors: cannot list lessons — ${r.why}`, "warning");
			return;
		}
		let rows: LessonRow[];
		try {
			rows = (JSON.parse(r.stdout || "[]") as LessonRow[]).filter((x) => x.status === "open");
		} catch {
			ctx.ui.notify("priors: the keeper's lesson list was not JSON", "warning");
			return;
		}
		if (!rows.length) {
			ctx.ui.notify("priors: no proposed lessons wait for your review", "info");
			return;
		}
		if (!ctx.hasUI) {
			const lines = rows.map((x) => `${x.id} (${x.ns}) ${x.claim} — priors decide ${x.id} accepted | obsolete`);
			ctx.ui.notify(`priors: ${rows.length} proposed lesson(s):\n${lines.join("\n")}`, "info");
			return;
		}
		const done: string[] = [];
		for (const row of rows) {
			const choice = await ctx.ui.select(`${row.id} (${row.ns}): ${row.claim}`, ["accept", "retire", "skip"]);
			if (choice === undefined) break; // escape ends the review
			if (choice === "skip") continue;
			const verdict = choice === "accept" ? "accepted" : "obsolete";
			const d = await run(ctx, ["decide", row.id, verdict]);
			if (!d.ok) {
				ctx.ui.notify(`priors: ${row.id} not decided — ${d.why}`, "warning");
				continue;
			}
			done.push(d.stdout.trim());
		}
		if (done.length) ctx.ui.notify(`priors:\n${done.join("\n")}`, "info");
	}

	async function status(ctx: ExtensionContext): Promise<void> {
		const r = await run(ctx, ["status", "--calls"]);
		ctx.ui.notify(r.ok ? r.stdout.trim() || "priors: nothing recorded yet" : `priors: ${r.why}`, r.ok ? "info" : "warning");
	}

	pi.registerCommand("priors", {
		description: "priors lessons: score success|partial|failure [note] · review · status",
		getArgumentCompletions: (prefix: string) => {
			const items = ["score success", "score partial", "score failure", "review", "status"]
				.filter((v) => v.startsWith(prefix))
				.map((v) => ({ value: v, label: v }));
			return items.length ? items : null;
		},
		handler: async (args, ctx) => {
			const words = args.trim().split(/\s+/).filter((w) => w.length > 0);
			const sub = words.shift();
			if (sub === "score") return score(words, ctx);
			if (sub === "review") return review(ctx);
			if (sub === "status") return status(ctx);
			ctx.ui.notify("usage: /priors score success|partial|failure [note] · /priors review · /priors status", "info");
		},
	});
}
