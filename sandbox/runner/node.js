// The resident JavaScript interpreter of MCP Sandbox. The engine starts it
// once per sandbox (see sandbox/runner/doc.go for the protocol) and sends it
// code to run; top-level let, const, var, functions and classes persist
// between runs, and the value of a trailing expression is returned.
//
// The bootstrap runs this text as the body of function (require, NONCE, DIR).
// The shell wrapper (interp.go) has already arranged the file descriptors:
// 3 = frames to the engine, 4 = frames from the engine, 5 = diagnostics,
// 0 = /dev/null, and 1 and 2 = the FIFOs DIR/out and DIR/err, which a relay
// thread turns into "out" and "err" frames (so subprocesses are captured).
'use strict';
const fs = require('fs');
const net = require('net');
const util = require('util');
const vm = require('vm');
const { Writable } = require('stream');
const { Worker } = require('worker_threads');

const VERSION = '1';
const RUNNER_FILE = 'mcp-sandbox-runner.js';
const MAX_RESULT = 1 << 16; // runner.MaxResult: the done frame stays within runner.MaxPayload
const realExit = process.exit.bind(process);

let acorn = null;
try {
  // Node's own copy of acorn (behind --expose-internals), used only for
  // code with top-level await.
  acorn = require('internal/deps/acorn/acorn/dist/acorn');
} catch (e) {
  acorn = null;
}

// heldBuffer gives both threads their view of held: the bytes the main
// thread holds for fds 1 and 2 (see hold), after a lock, their lengths, and
// a counter it bumps when it starts holding. The relay's source has it
// as text.
function heldBuffer(held) {
  const FLUSH_MS = 5;
  const HELD_CAP = 1 << 16;
  const KICK = 3;
  if (!held) return { FLUSH_MS, HELD_CAP, KICK };
  const hdr = new Int32Array(held, 0, 4);
  const bytes = [new Uint8Array(held, 16, HELD_CAP), new Uint8Array(held, 16 + HELD_CAP, HELD_CAP)];
  const lockHeld = () => {
    while (Atomics.compareExchange(hdr, 0, 0, 1) !== 0) Atomics.wait(hdr, 0, 1, 1);
  };
  const unlockHeld = () => {
    Atomics.store(hdr, 0, 0);
    Atomics.notify(hdr, 0);
  };
  // takeHeld empties what is held for fd i + 1 and returns a copy, or null.
  const takeHeld = (i) => {
    lockHeld();
    const n = hdr[1 + i];
    hdr[1 + i] = 0;
    const b = n ? Buffer.from(bytes[i].subarray(0, n)) : null;
    unlockHeld();
    return b;
  };
  return { FLUSH_MS, HELD_CAP, KICK, hdr, bytes, lockHeld, unlockHeld, takeHeld };
}

// The relay thread owns fd 3: it writes output frames as the FIFOs deliver
// them, and the main thread's frames (ready, done) once it has read the
// FIFOs empty: what the code wrote before them is sent before them. Only
// this thread reads the FIFOs, so nothing it has read is still on its way.
const RELAY = `
'use strict';
const { parentPort, workerData } = require('worker_threads');
const fs = require('fs');
const net = require('net');
const { nonce, dir, acks, held } = workerData;
const pause = new Int32Array(new SharedArrayBuffer(4));
const { FLUSH_MS, KICK, hdr: heldHdr, takeHeld } = (${heldBuffer})(held);

function writeAll(buf) {
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(3, buf, off, buf.length - off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}
function send(kind, payload) {
  const p = Buffer.from(payload);
  writeAll(Buffer.concat([Buffer.from(nonce + ' ' + kind + ' ' + p.length + '\\n', 'latin1'), p]));
}
const fds = ['out', 'err'].map((name) => fs.openSync(dir + '/' + name, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK));
// Everything is open now; the FIFOs need no names any more.
for (const name of ['out', 'err']) fs.unlinkSync(dir + '/' + name);
fs.rmdirSync(dir);
['out', 'err'].forEach((name, i) => {
  const sock = new net.Socket({ fd: fds[i], readable: true, writable: false });
  sock.on('data', (chunk) => send(name, chunk));
});
const chunk = Buffer.allocUnsafe(1 << 16);
// readNow relays what FIFO i holds now, a MiB at most: a process that goes
// on writing after a run has that much in before the run's end.
function readNow(i) {
  for (let k = 0; k < 16; k++) {
    let n = 0;
    try {
      n = fs.readSync(fds[i], chunk, 0, chunk.length, null);
    } catch (e) {
      return; // EAGAIN: nothing more now
    }
    if (n <= 0) return;
    send(i ? 'err' : 'out', chunk.subarray(0, n));
  }
}
// Bytes the main thread holds (see hold) are relayed FLUSH_MS after it
// starts holding, also while its code is busy: what the FIFO has is read
// first, as it was written before them.
if (held) {
  let kicks = Atomics.load(heldHdr, KICK);
  const relayHeld = () => {
    kicks = Atomics.load(heldHdr, KICK);
    for (const i of [0, 1]) {
      readNow(i);
      const b = takeHeld(i);
      if (b) send(i ? 'err' : 'out', b);
    }
    arm();
  };
  const arm = () => {
    const w = Atomics.waitAsync(heldHdr, KICK, kicks);
    if (w.async) w.value.then(() => setTimeout(relayHeld, FLUSH_MS));
    else setTimeout(relayHeld, FLUSH_MS);
  };
  arm();
}
parentPort.on('message', (m) => {
  readNow(0);
  readNow(1);
  for (const f of m.frames) send(f.kind, f.payload);
  // Tell a main thread blocked in process.exit (see flushSync).
  Atomics.add(acks, 0, 1);
  Atomics.notify(acks, 0);
});
`;

// acks: how many of the main thread's messages the relay has handled.
const acks = new Int32Array(new SharedArrayBuffer(4));
let posted = 0;
// Output in bursts is held here rather than written a line at a time (a
// system call per line: 200,000 lines of console.log took 25 s under
// gVisor), and the relay thread fetches it while the code runs on; a Node
// without Atomics.waitAsync writes every chunk.
const held = typeof Atomics.waitAsync === 'function' ? new SharedArrayBuffer(16 + 2 * heldBuffer(null).HELD_CAP) : null;
const { FLUSH_MS, HELD_CAP, KICK, hdr: heldHdr, bytes: heldBytes, lockHeld, unlockHeld, takeHeld } = heldBuffer(held);
const relay = new Worker(RELAY, { eval: true, workerData: { nonce: NONCE, dir: DIR, acks, held } });
relay.on('error', (e) => fatal('relay: ' + (e && e.stack || e)));

function fatal(msg) {
  try {
    fs.writeSync(5, 'mcp-sandbox runner: ' + msg + '\n');
  } finally {
    realExit(70);
  }
}

// writeAll writes buf to fd whole. Node made fds 1 and 2 non-blocking: a
// FIFO the relay has not emptied yet says EAGAIN, which is a wait, not an
// error (as an error it ended the stream, lost the output, and a loop that
// went on logging queued an error per line until the heap ran out).
const pause = new Int32Array(new SharedArrayBuffer(4));
function writeAll(fd, buf) {
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(fd, buf, off, buf.length - off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}

// emit writes chunk to fd (1 or 2), as the code's output. Like a
// line-buffered stream it writes at once, so output keeps its order with
// what subprocesses write, until BURST chunks with a line end came within
// FLUSH_MS of each other; then it holds chunks (hold) until the pace drops,
// the code starts a process, its run ends, or the relay fetches them.
const BURST = 64;
const perfNow = performance.now.bind(performance); // bound here: the code may replace it
const pace = [{ last: 0, lines: 0 }, { last: 0, lines: 0 }];
function emit(fd, chunk) {
  const i = fd - 1;
  if (held) {
    const p = pace[i];
    if (chunk.includes(10)) {
      const now = perfNow();
      if (now - p.last >= FLUSH_MS) p.lines = 0;
      p.last = now;
      p.lines++;
    }
    if (p.lines > BURST && chunk.length < HELD_CAP) return hold(i, chunk);
    flushHeld(i);
  }
  writeAll(fd, chunk);
}

function hold(i, chunk) {
  lockHeld();
  const n = heldHdr[1 + i];
  if (n + chunk.length <= HELD_CAP) {
    heldBytes[i].set(chunk, n);
    heldHdr[1 + i] = n + chunk.length;
    unlockHeld();
    if (n === 0) {
      Atomics.add(heldHdr, KICK, 1);
      Atomics.notify(heldHdr, KICK);
    }
    return;
  }
  heldHdr[1 + i] = 0;
  const b = Buffer.from(heldBytes[i].subarray(0, n));
  unlockHeld();
  writeAll(i + 1, b);
  writeAll(i + 1, chunk);
}

// flushHeld writes what is held for fd i + 1 into its FIFO; flushAll both.
// Code that closed the fd since loses it, as it would a write of its own.
function flushHeld(i) {
  const b = held && takeHeld(i);
  if (!b) return;
  try {
    writeAll(i + 1, b);
  } catch (e) {
    // Closed: nowhere to write it.
  }
}
function flushAll() {
  flushHeld(0);
  flushHeld(1);
}

// A process the code starts writes after what the code wrote before.
(function hookSpawns() {
  const { ChildProcess } = require('child_process');
  const spawn = ChildProcess.prototype.spawn;
  ChildProcess.prototype.spawn = function (...args) {
    flushAll();
    return spawn.apply(this, args);
  };
  const quiet = process.noDeprecation;
  process.noDeprecation = true; // for NODE_PENDING_DEPRECATION=1
  try {
    const sync = process.binding('spawn_sync');
    const spawnSync = sync.spawn;
    sync.spawn = function (...args) {
      flushAll();
      return spawnSync.apply(this, args);
    };
  } catch (e) {
    // A Node without it: execSync's output may pass a burst's tail.
  } finally {
    process.noDeprecation = quiet;
  }
})();

// finish hands frames to the relay, which sends them after the output
// written so far.
function finish(frames) {
  flushAll();
  posted++;
  relay.postMessage({ frames });
}

// flushSync blocks until the relay has sent everything written so far, so
// process.exit in user code does not lose the output before it.
function flushSync(timeoutMs) {
  finish([]);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const handled = Atomics.load(acks, 0);
    if (handled >= posted) return;
    const left = deadline - Date.now();
    if (left <= 0) return;
    Atomics.wait(acks, 0, handled, left);
  }
}
process.exit = function exit(code) {
  try {
    flushSync(2000);
  } finally {
    realExit(code);
  }
};

function frame(kind, obj) {
  return { kind, payload: Buffer.from(JSON.stringify(obj)) };
}

// User code writes to fds 1 and 2 synchronously (emit), so output keeps its
// order with subprocesses' output and is relayed even while the code blocks.
function fdStream(fd) {
  const s = new Writable({
    decodeStrings: true,
    write(chunk, _enc, cb) {
      try {
        emit(fd, chunk);
      } catch (e) {
        return cb(e);
      }
      cb();
    },
  });
  s.fd = fd;
  s.isTTY = false;
  return s;
}
const stdout = fdStream(1);
const stderr = fdStream(2);
Object.defineProperty(process, 'stdout', { configurable: true, enumerable: true, get: () => stdout });
Object.defineProperty(process, 'stderr', { configurable: true, enumerable: true, get: () => stderr });
globalThis.console = new console.Console({ stdout, stderr });
globalThis.require = require;

function cleanStack(text) {
  const lines = String(text).split('\n');
  const cut = lines.findIndex((l) => l.includes(RUNNER_FILE) || l.includes('node:vm:') || l.includes('node:internal/process/task_queues'));
  return (cut < 0 ? lines : lines.slice(0, cut)).join('\n');
}

function printError(e, prefix) {
  let text;
  if (e instanceof Error && typeof e.stack === 'string') text = cleanStack(e.stack);
  else text = 'Uncaught ' + util.inspect(e);
  try {
    emit(2, Buffer.from((prefix || '') + text + '\n'));
  } catch (err) {
    // Nowhere left to report it.
  }
}
process.on('uncaughtException', (e) => printError(e, 'Uncaught exception: '));
process.on('unhandledRejection', (e) => printError(e, 'Unhandled rejection: '));

// patternNames lists the names a declaration's pattern binds.
function patternNames(p, out) {
  switch (p.type) {
    case 'Identifier': out.push(p.name); break;
    case 'ObjectPattern': for (const q of p.properties) patternNames(q.type === 'RestElement' ? q.argument : q.value, out); break;
    case 'ArrayPattern': for (const q of p.elements) if (q) patternNames(q, out); break;
    case 'RestElement': patternNames(p.argument, out); break;
    case 'AssignmentPattern': patternNames(p.left, out); break;
  }
  return out;
}

// hoistDeclarations turns a cell into the source of an async function
// whose top-level declarations become globals (so they persist, as in a
// REPL) and which returns the value of a trailing expression. The edits
// keep every statement on its line and, mostly, its column, so that errors
// point at the cell's own text.
function hoistDeclarations(code, ast) {
  const src = (a, b) => code.slice(a, b);
  const declared = new Set();
  const declare = (n) => {
    // A global var, unless an earlier cell left a let, const or class
    // of that name, which an assignment then reaches.
    try {
      vm.runInThisContext('var ' + n + ';');
      declared.add(n);
    } catch (e) {}
  };
  const edits = [];
  const publish = [];
  ast.body.forEach((st, i) => {
    const last = i === ast.body.length - 1;
    if (st.type === 'VariableDeclaration') {
      // "const a = 1, b" becomes ";(    a = 1, b = undefined);"
      const ds = st.declarations;
      let text = ';(' + ' '.repeat(Math.max(0, st.kind.length - 2)) + src(st.start + st.kind.length, ds[0].start);
      ds.forEach((d, k) => {
        if (k > 0) text += src(ds[k - 1].end, d.start);
        for (const n of patternNames(d.id, [])) declare(n);
        text += src(d.start, d.end) + (d.init ? '' : ' = undefined');
      });
      const tail = src(ds[ds.length - 1].end, st.end);
      text += ')' + tail + (tail.endsWith(';') ? '' : ';');
      edits.push({ start: st.start, end: st.end, text });
    } else if (st.type === 'FunctionDeclaration') {
      // Left in place, so it is hoisted within the cell, and made global
      // as the cell starts.
      declare(st.id.name);
      if (declared.has(st.id.name)) publish.push(st.id.name);
    } else if (st.type === 'ClassDeclaration') {
      declare(st.id.name);
      const n = JSON.stringify(st.id.name);
      if (declared.has(st.id.name)) {
        edits.push({ start: st.end, end: st.end, text: ';globalThis[' + n + '] = ' + st.id.name + ';' });
      } else {
        edits.push({ start: st.start, end: st.end, text: ';(' + st.id.name + ' = ' + src(st.start, st.end) + ');' });
      }
    } else if (last && st.type === 'ExpressionStatement') {
      // "return (" goes right after the statement before, so the
      // expression keeps its place when it starts a line.
      const at = i > 0 ? ast.body[i - 1].end : 0;
      edits.push({ start: at, end: at, text: 'return (' });
      edits.push({ start: st.expression.end, end: st.expression.end, text: ')' });
    }
  });
  edits.sort((a, b) => a.start - b.start);
  let body = '';
  let at = 0;
  for (const e of edits) {
    body += src(at, e.start) + e.text;
    at = e.end;
  }
  body += src(at, code.length);
  const prelude = publish.map((n) => 'globalThis[' + JSON.stringify(n) + '] = ' + n + ';').join(' ');
  return '(async () => {' + prelude + body + '\n})';
}

// evaluate runs one cell. Like a REPL, it reads a leading "{" as an object
// literal when it can, and, with acorn, runs code with top-level await (or
// that declares again a let from an earlier cell) as an async function
// whose declarations become globals.
function evaluate(code, filename) {
  if (/^\s*\{/.test(code) && !/;\s*$/.test(code)) {
    try {
      const script = new vm.Script('(' + code + '\n)', { filename });
      return { value: script.runInThisContext({ displayErrors: true }), isAsync: false };
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
    }
  }
  // A top-level const would bind for good, so that running the cell again
  // (as one does after fixing a later line) could only fail: like a
  // notebook, run such a cell hoisted, where its consts become globals.
  if (acorn && /\bconst\b/.test(code)) {
    const ast = parseCell(code);
    if (ast && ast.body.some((st) => st.type === 'VariableDeclaration' && st.kind === 'const')) {
      return runHoisted(code, ast, filename);
    }
  }
  let script;
  try {
    script = new vm.Script(code, { filename });
  } catch (e) {
    if (!(e instanceof SyntaxError) || !/await/.test(e.message)) throw e;
    return evaluateHoisted(code, filename, e);
  }
  try {
    return { value: script.runInThisContext({ displayErrors: true }), isAsync: false };
  } catch (e) {
    // A let or class declared again fails before any of the cell runs (its
    // first stack frame is vm's, not the cell's): run it hoisted instead.
    const first = String(e && e.stack).split('\n').find((l) => l.startsWith('    at '));
    if (!(e instanceof SyntaxError) || !/already been declared/.test(e.message) || !first || !first.includes('node:vm')) throw e;
    return evaluateHoisted(code, filename, e);
  }
}

// parseCell parses a cell as a script that may use top-level await; null
// when it does not parse (the plain path then reports the error as V8
// words it).
function parseCell(code) {
  try {
    return acorn.parse(code, { ecmaVersion: 'latest', sourceType: 'script', allowAwaitOutsideFunction: true });
  } catch (e) {
    return null;
  }
}

// evaluateHoisted runs a cell hoisted when plain evaluation failed with
// original, which is what the user sees when the cell does not parse.
function evaluateHoisted(code, filename, original) {
  const ast = acorn && parseCell(code);
  if (!ast) throw original;
  return runHoisted(code, ast, filename);
}

function runHoisted(code, ast, filename) {
  const wrapped = hoistDeclarations(code, ast);
  // Called from here, not from the cell's script, so that the stack
  // shows the cell's frames only.
  const fn = new vm.Script(wrapped, { filename }).runInThisContext({ displayErrors: true });
  return { value: fn(), isAsync: true };
}

async function runCell(req) {
  let exitCode = 0;
  let result = null;
  try {
    const r = evaluate(req.code, 'cell' + req.id);
    const value = r.isAsync ? await r.value : r.value;
    if (value !== undefined) {
      globalThis._ = value;
      result = util.inspect(value, { depth: 4, maxArrayLength: 200, maxStringLength: 100000, breakLength: 100 });
      if (result.length > MAX_RESULT) result = result.slice(0, MAX_RESULT / 2) + '\n[... shortened ...]\n' + result.slice(-MAX_RESULT / 2);
    }
  } catch (e) {
    exitCode = 1;
    printError(e);
  }
  finish([frame('done', { id: req.id, exit_code: exitCode, result })]);
}

const queue = [];
let busy = false;
function pump() {
  if (busy || queue.length === 0) return;
  busy = true;
  runCell(queue.shift()).finally(() => {
    busy = false;
    pump();
  });
}

const input = new net.Socket({ fd: 4, readable: true, writable: false });
let inbuf = Buffer.alloc(0);
input.on('data', (chunk) => {
  inbuf = inbuf.length ? Buffer.concat([inbuf, chunk]) : chunk;
  for (;;) {
    const nl = inbuf.indexOf(10);
    if (nl < 0) break;
    const [nonce, kind, len] = inbuf.subarray(0, nl).toString('latin1').split(' ');
    const n = Number(len);
    if (nonce !== NONCE || !Number.isInteger(n) || n < 0) fatal('bad frame header');
    if (inbuf.length < nl + 1 + n) break;
    const payload = inbuf.subarray(nl + 1, nl + 1 + n).toString('utf8');
    inbuf = inbuf.subarray(nl + 1 + n);
    if (kind === 'run') queue.push(JSON.parse(payload));
  }
  pump();
});
input.on('end', () => realExit(0));
input.on('error', () => realExit(0));

finish([frame('ready', { pid: process.pid, version: 'node ' + process.version + ' runner ' + VERSION })]);
