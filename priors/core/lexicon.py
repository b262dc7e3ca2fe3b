"""The words code reviewers use, by concept: what lets `similarity` see that two findings say the same
thing in different words — and that two findings in the same words say opposite things.

Pure data and its compiled tables, no I/O. Written from general software knowledge (the vocabulary of
code review: resources, errors, concurrency, security, numbers, text), never from the sentences of a
test set: each line names one idea and the words and phrases that mean it.

`CONCEPTS`, one idea a line: `head: member, member phrase, !member` — every member folds to the head
(stemmed, so inflections follow); a phrase is matched word by word before stop words go (`take
precedence`, `out of memory`); a member marked `!` means the head *negated* (`leak` is `not close`,
`hang` is `no timeout`, `race` is `no lock`), so that `leaks the socket` and `never closes the socket`
agree, and `the socket leaks` and `the socket is closed` do not.

`CONTRASTS`: heads that are values of one dimension (`first`/`last`, `accept`/`reject`, `before`/
`after`): two claims that each name a different one, and neither the other's, are about different things.

`NEGATED_MEANS`: a verb that, negated, means a concept (`never returned`, `not included` → `drop`).

`LIGHT`: words that carry little of what a finding is (`sets`, `leaves`, `holds`): half a word's weight.
`FRAMING`: words that frame a review comment, not its finding (`nit`, `consider`, `probably`): dropped.
`SYMBOLS`: marks with a name (`'-'` is a dash, `../` is path traversal, `0.0.0.0` all interfaces).
"""

from __future__ import annotations

import re
from functools import lru_cache

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Dict, List, Tuple

CONCEPTS = """
error: error, exception, failure, fail, err, fault, errno
raise: raise, throw, crash, panic, blow up, blows up, bail out
catch: catch, caught, rescue, handle, handled, !uncaught, !unhandled, !unrescued
ignore: swallow, ignore, suppress, silence, discard, eat, mute, squelch, disregard, overlook
retry: retry, retries, retried, reattempt, try again, retrying, attempt, attempts
backoff: backoff, back off, backs off, exponential backoff, jitter, delay between, !retry immediately,
    !retries immediately, !retried immediately, !without delay
timeout: timeout, time out, timed out, deadline, time limit, !hang, !hung, !stuck, !freeze, !block, !wait forever
limit: limit, bound, cap, maximum, max, ceiling, quota, upper bound, upper limit, !unbounded, !unlimited, !uncapped,
    !forever, !indefinitely, !infinite, !infinitely, !endless, !endlessly, !without bound, !without limit
ratelimit: rate limit, rate limiting, ratelimit, ratelimiting, throttle, throttling, brute force, bruteforce
close: close, release, dispose, cleanup, clean up, !leak, !leaky, !unclosed, !left open, !dangling
memory: memory, ram, heap, oom, out of memory, memoryerror, memory usage, memory exhaustion
whole: whole, entire, entirely, full, fullsize, full size, all at once, in full
large: large, big, huge, enormous, massive, giant, gigantic, oversized, long
split: split, break up, break down, smaller function, decompose
disk: disk, storage, filesystem, file system
temporary: temporary, temp, tmp, tempfile, scratch
connection: connection, conn
thread: thread, multithreaded, multithreading, concurrent, concurrently, concurrency, parallel, simultaneous,
    simultaneously, at the same time, goroutine
sync: lock, mutex, locking, synchronized, synchronize, synchronization, semaphore, critical section, atomic,
    atomically, atomicity, transaction, transactional, threadsafe, thread safe, !race, !racy, !race condition,
    !data race, !unsynchronized, !toctou, !nonatomic
deadlock: deadlock, livelock
busywait: busywait, busy wait, busy, spin, spinning, spinlock, poll, polling
sleep: sleep, sleeping, nap
wait: wait, await
finish: finish, finished, complete, completion, done
running: running, inflight, in flight, pending, ongoing, outstanding
shutdown: shutdown, shut down, terminate, termination, graceful, gracefully
signal: signal, sigterm, sigint, sighup, sigkill
slow: slow, quadratic, inefficient, performance, expensive, costly, bottleneck, sluggish, n2, o n 2, n squared
cache: cache, caching, cached, memoize, memoise, memoization, memo
repeat: loop, iterate, iteration, repeat, cycle
everycall: every call, each call, every time, each time, every request, each request, per call, per request, on each,
    once per, per item, each item, every item, per iteration, each iteration, every iteration, for each, for every,
    repeatedly
copy: copy, clone, deepcopy, deep copy, new object, new instance, new list, new dict, new array
mutate: mutate, mutation, modify, modification, alter, in place, inplace, mutable, side effect
inject: injection, inject, injectable, sqli, command injection, shell injection
interpolate: interpolate, interpolation, concatenate, concatenation, concat, fstring, f string, format,
    string formatting, string building, splice
escape: escape, sanitize, sanitise, sanitization, sanitisation, quote, quoting, !unescaped, !unsanitized,
    !unsanitised, !unquoted
validate: validate, validation, validator, check, verify, verification
malformed: malformed, invalid, bad, garbage, bogus, illformed, ill formed, unparseable, unparsable
corrupt: corrupt, corruption, mangle, garble, break, breaking, breaks
insecure: insecure, unsafe, vulnerable, vulnerability, exploitable, exploit, dangerous, weak, arbitrary code,
    code execution, execute arbitrary code, run arbitrary code, remote code execution, rce, security hole
traversal: traversal, path traversal, directory traversal, dotdot, dot dot, zip slip, zipslip
xss: xss, cross site scripting, crosssite scripting
csrf: csrf, xsrf, cross site request forgery
encrypt: encrypt, encrypted, encryption, cipher, ciphertext, !plaintext, !plain text, !cleartext, !clear text,
    !unencrypted, !in the clear
log: log, logged, logging, logger, syslog, log file
password: password, passwd, pwd, passphrase, pw
secret: secret, credential, api key, apikey, private key, access key
constanttime: constant time, constanttime, timing safe, timingsafe, compare digest, comparedigest, timingsafeequal,
    secure compare, securecompare, !timing attack, !timing leak, !timing side channel
random: random, rand, prng, math rand, random module, mersenne twister
securerandom: csprng, urandom, crypto rand, secure random, securerandom, cryptographically secure
predictable: predictable, guessable, deterministic seed
hash: hash, digest, hashing
salt: salt, salted, !unsalted
tls: tls, ssl, https, certificate, cert, certificates
auth: authentication, authenticate, authenticated, login, logon, signin, sign in, authn
authz: authorization, authorize, authorized, permission, access control, authz, privilege
expire: expire, expiry, expiration, expired, ttl, time to live, past expiry, past their expiry, past its expiry,
    past the expiry
untrusted: untrusted, user input, user supplied, usersupplied, user provided, userprovided, client supplied,
    clientsupplied, attacker controlled, attacker supplied, tainted, external input
verbatim: verbatim, as is, asis, unmodified, unsanitized input
filename: filename, file name, basename
directory: directory, dir, folder
null: null, none, nil, undefined, nullptr, null pointer, nullpointerexception, npe, nonetype
empty: empty, blank, zero length, zerolength
zero: zero, zerodivisionerror, zerodivision, division by zero, divide by zero, divided by zero
negative: negative, below zero, less than zero, under zero
positive: positive, above zero, greater than zero
boundary: offbyone, off by one, fencepost, boundary condition, out of bounds, outofbounds, out of range,
    index out of range, indexerror, bounds check
first: first, initial, leading, beginning, start
last: last, final, end, ending, trailing, tail
duplicate: twice, duplicate, duplicated, duplicates, more than once, two times, second time, dupe, redundant
drop: drop, lose, lost, miss, missing, skip, omit, omission, strip, remove
order: order, ordering, sorted, sort
lifo: lifo, stack order
fifo: fifo, queue order, insertion order
read: read, reads, reading
write: write, writes, written, wrote, writing, save, store, persist
accept: accept, allow, permit, let through, lets through, tolerate, admit
reject: reject, refuse, deny, forbid, disallow, decline
enable: enable, enabled, turn on, switch on
disable: disable, disabled, turn off, switch off
grow: grow, growth, increase, expand, balloon
shrink: shrink, decrease, reduce
synchronous: synchronous, synchronously, sync
asynchronous: asynchronous, asynchronously, async, nonblocking, non blocking
public: public, world readable, worldreadable, world writable
private: private, owner only
relative: relative, relative path
absolute: absolute, absolute path
overflow: overflow, overflows, wraparound, wrap around, wraps around
underflow: underflow, underflows
float: float, floating, floating point, floatingpoint
decimal: decimal, fixed point, fixedpoint, bigdecimal
money: money, currency, amount, cents, cent, dollar, dollars, euro, euros, monetary
round: round, rounding, precision, rounding error, imprecise, inexact
arithmetic: arithmetic, math, maths, calculation, calculate, compute, computation
stable: stable, stability, !unstable
compare: compare, comparison, compares, compared
divide: divide, division, divides, divisor
shadow: shadow, mask, hide
builtin: builtin, built in
override: override, overrides, precedence, take precedence, takes precedence, supersede, overrule, take priority,
    takes priority
environment: environment, env, environ
envvar: environment variable, env var, envvar, env variable, getenv, environment setting
config: configuration, config, cfg, conf, settings, setting
parameter: parameter, param, argument, arg, kwarg
retval: return value, return code, retval, result code
exitcode: exit code, exit status, exitcode
allinterfaces: allinterfaces, all interfaces, every interface, any interface, all addresses, inaddr any
localhost: localhost, loopback, local interface
listen: listen, bind, binds, listening
response: response, res, resp, reply
request: request, req
parse: parse, parsing, parser, deserialize, deserialise, unmarshal
load: load, loads, loading, fetch, slurp, pull in
comma: comma, commas, delimiter
newline: newline, line ending, line endings, lineending, eol, crlf, line break, linebreak, carriage return
encoding: encoding, charset, codec, character set, text encoding
unicode: unicode, nonascii, non ascii, accent, accented, accents, diacritic, diacritics, multibyte, emoji, utf8
letter: letter, character, char, chars, glyph
whitespace: whitespace, space, spaces, tab, tabs
dash: dash, hyphen, hyphens, dashes
casesensitive: case sensitive, casesensitive, !case insensitive, !caseinsensitive, !lowercase, !lowercased,
    !lower case, !casefold
default: default, implicit, fallback
platform: platform, locale, system default, operating system
timezone: timezone, time zone, tz, tzinfo, utc offset, timezone aware, !naive, !local time, !localtime
utc: utc, gmt
local: local
status: status, status code, http status, statuscode
preserve: preserve, keep, retain, maintain, !distort, !stretch, !squash, !skew
unused: unused, dead code, unreferenced, never used, not used, unreachable
global: global, global state, singleton, module level, modulelevel
hardcoded: hardcoded, hard coded, hardcode, literal, magic, magic number, magic string, magic value, inline constant,
    baked in, constant
lru: lru, least recently used
mru: mru, most recently used
tld: tld, top level domain, toplevel domain
integer: integer, int, int32, int64
boolean: boolean, bool
string: string, str
address: address, addr
database: database, db
message: message, msg
length: length, len, size
index: index, idx
buffer: buffer, buf
path: path, filepath
_: end up, ends up, ended up, make sure, in order to, as well, at all
"""

# Ideas that name a thing the code handles, not what is wrong with it: two findings that each name
# what is wrong (`hardcoded`, `timeout`, `inject`...) and share none of it are about different things.
THINGS = frozenset("""
error connection thread temporary disk directory filename path password secret money environment envvar config
parameter retval exitcode response request comma newline letter whitespace dash integer boolean string address
database message length index buffer hash tls signal listen local utc first last read write order default
platform status load parse compare divide arithmetic wait running finish large whole zero negative positive null
empty memory cache copy builtin allinterfaces localhost lifo fifo lru mru tld public private relative absolute
synchronous asynchronous enable disable grow shrink auth authz session money float decimal untrusted
""".split())

# Ideas close enough that two findings naming one each may be one finding (`catches` / `swallows`).
RELATED = ("catch ignore raise", "validate accept reject malformed", "random securerandom predictable",
           "sync deadlock thread", "timeout limit", "limit grow length large memory whole", "interpolate inject escape",
           "hardcoded default", "everycall duplicate cache", "retry repeat", "raise boundary overflow null zero",
           "expire limit")

CONTRASTS = (
    "first last", "accept reject", "before after", "read write", "enable disable", "grow shrink",
    "synchronous asynchronous", "public private", "relative absolute", "overflow underflow", "float decimal",
    "lifo fifo", "lru mru", "negative zero positive", "null empty", "duplicate drop", "utc local",
    "allinterfaces localhost", "return raise", "text binary", "ascending descending", "upper lower", "newest oldest",
)

NEGATED_MEANS = {"drop": "return include emit yield output produce send show display list contain",
                 "preserve": "change regenerate renew rotate refresh reset replace"}

LIGHT = frozenset("""
set sets leave leaves left hold holds holding create creates created cause causes caused lead leads happen happens
occur occurs contain contains containing perform performs take takes give gives go goes silently output produce
produces become becomes became come comes came above below assume assumes assumed module library package
""".split())

FRAMING = frozenset("""
nit nitpick consider suggest suggestion please maybe perhaps probably possibly potentially likely fyi todo note
minor major critical blocker optional style bug issue problem currently really actually properly correctly
appropriately already far one inside between around across through within via per among during upon against along throughout
""".split())

SYMBOLS = (  # (pattern, the word it is)
    (r"\.\./|\.\.\\", " traversal "), (r"\b0\.0\.0\.0\b", " allinterfaces "), (r"\b127\.0\.0\.1\b", " localhost "),
    (r"\b[Ii]/[Oo]\b", " io "), (r"\b[Oo]\(\s*n\s*(?:\^|\*\*)\s*2\s*\)|\b[Oo]\(n\u00b2\)", " quadratic "),
    (r"===|!==", " strictequality "), (r"==", " equalityop "), (r"!=", " inequalityop "),
    (r"['\"`]-['\"`]", " dash "), (r"['\"`]/['\"`]", " slash "), (r"['\"`]_['\"`]", " underscore "),
    (r"['\"`],['\"`]", " comma "), (r"['\"`]\.['\"`]", " dot "), (r"['\"`]\\n['\"`]", " newline "),
    (r"['\"`] ['\"`]", " space "),
)
SYMBOL_RE = re.compile("|".join(f"(?:{p})" for p, _ in SYMBOLS))
_SYMBOL_WORDS = [(re.compile(p), w) for p, w in SYMBOLS]


def symbol_word(mark: str) -> str:
    """The word a mark matched by `SYMBOL_RE` stands for."""
    for rx, w in _SYMBOL_WORDS:
        if rx.fullmatch(mark):
            return w
    return " "


@lru_cache(maxsize=32768)
def stem(w: str) -> str:
    """The lexicon's stemmer: `legacy_stem`, then a doubled consonant undone (`formatted` → `format`,
    `dropped` → `drop`) and a last `i` dropped (`expiry`, `expire` → `expir`)."""
    s = _strip(w)
    if (w.endswith(("ed", "ing")) and len(s) > 4 and s[-1] == s[-2] and s[-1].isalpha()
            and (s[-1] not in "lsz" or (s[-1] == "l" and len(s) >= 7 and s[-3] in "eo"))):  # `cancelled`
        s = s[:-1]
    s = _strip(s)
    if len(s) > 4 and s[-1] == "i":
        s = s[:-1]
    return s


@lru_cache(maxsize=32768)
def legacy_stem(w: str) -> str:
    """A light suffix stripper: enough to fold `evicts`/`evicted`/`eviction`, never clever. Twice, so
    that `buffered` (→ `buffer`) meets `buffer` (→ `buff`). The rules before the lexicon: what
    `verify` holds a run sealed before it to."""
    return _strip(_strip(w))


_SUFFIXES = (("ations", ""), ("ation", ""), ("ments", ""), ("ment", ""), ("ities", ""), ("ity", ""), ("ingly", ""),
             ("edly", ""), ("ions", ""), ("ion", ""), ("ies", "i"), ("ied", "i"), ("ing", ""), ("ed", ""), ("ers", ""),
             ("er", ""), ("ly", ""), ("es", ""), ("s", ""), ("e", ""), ("y", "i"))
_BY_LAST: Dict[str, List[Tuple[str, str]]] = {}
for _suf, _rep in _SUFFIXES:  # the suffixes in their order, grouped by their last letter: the same first match
    _BY_LAST.setdefault(_suf[-1], []).append((_suf, _rep))


def _strip(w: str) -> str:
    if len(w) <= 3 or w.isdigit():
        return w
    for suf, rep in _BY_LAST.get(w[-1], ()):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: len(w) - len(suf)] + rep
    return w


def _compile() -> Tuple[Dict[str, Tuple[str, bool]], Dict[Tuple[str, ...], Tuple[str, bool]]]:
    """(stem → (head, negated)), (tuple of stems → (head, negated)) from `CONCEPTS`."""
    words: Dict[str, Tuple[str, bool]] = {}
    phrases: Dict[Tuple[str, ...], Tuple[str, bool]] = {}
    for line in re.sub(r"\n\s+", " ", CONCEPTS.strip()).splitlines():  # (an indented line continues the one above)
        name, _, rest = line.partition(":")
        head = stem(name.strip())
        for member in rest.split(","):
            member = member.strip()
            neg = member.startswith("!")
            parts = tuple(stem(p) for p in member.lstrip("!").split())
            if len(parts) == 1:
                words.setdefault(parts[0], (head, neg))
            elif parts:
                phrases.setdefault(parts, (head, neg))
    return words, phrases


WORDS, PHRASES = _compile()
PHRASE_STARTS = frozenset(p[0] for p in PHRASES)
LONGEST_PHRASE = max(len(p) for p in PHRASES)


def _issues() -> frozenset:
    heads = {h for h, _ in WORDS.values()} | {h for h, _ in PHRASES.values()}
    return frozenset(heads - {stem(w) for w in THINGS} - {"_"})


def kin(a: str, b: str) -> bool:
    """Are two heads one idea or related ones (`RELATED`)?"""
    return a == b or bool(KIN.get(a, _NONE) & KIN.get(b, _NONE))


_NONE: frozenset = frozenset()


ISSUES = _issues()  # the heads that say what is wrong


def _kin() -> Dict[str, frozenset]:
    out: Dict[str, set] = {}
    for i, group in enumerate(RELATED):
        for w in group.split():
            out.setdefault(stem(w), set()).add(i)
    return {w: frozenset(g) for w, g in out.items()}


KIN = _kin()  # a head → the `RELATED` groups it is in


def _contrasts() -> Dict[str, int]:
    out: Dict[str, int] = {}
    for i, group in enumerate(CONTRASTS):
        for w in group.split():
            out[stem(w)] = i
    out["0"] = out["zero"]  # (`zero` is read as the number 0)
    return out


CONTRAST_OF = _contrasts()  # head → the dimension it is a value of


def _negated_means() -> Dict[str, str]:
    out: Dict[str, str] = {}
    for head, verbs in NEGATED_MEANS.items():
        for v in verbs.split():
            out[stem(v)] = stem(head)
    return out


NEGATED_AS = _negated_means()


LIGHT_STEMS = frozenset(stem(w) for w in LIGHT)
FRAMING_STEMS = frozenset(stem(w) for w in FRAMING)
NUMBER_WORDS = {w: str(i) for i, w in enumerate("two three four five six seven eight nine ten".split(), 2)}


def size() -> Tuple[int, int, int]:
    """(ideas, words, phrases) in the lexicon: what docs/protocol.md reports."""
    return len(re.sub(r"\n\s+", " ", CONCEPTS.strip()).splitlines()), len(WORDS), len(PHRASES)


def members(head: str) -> List[str]:
    """The stems and phrases that fold to `head` (for tests and the docs)."""
    h = stem(head)
    return sorted([w for w, (x, _) in WORDS.items() if x == h] + [" ".join(p) for p, (x, _) in PHRASES.items() if x == h])
