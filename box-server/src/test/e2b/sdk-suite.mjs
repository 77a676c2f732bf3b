// Drives E2B's unchanged JS SDK against a Box server, whose addresses and key come from the
// environment (E2B_API_URL, E2B_SANDBOX_URL, E2B_API_KEY); E2B_MODULE is the file URL of the
// SDK's ESM entry point in the cache scripts/e2b-sdk installs. Prints "ok <check>" for each check
// that passed and exits non-zero at the first that did not.
const {
  Sandbox,
  FileNotFoundError,
  SandboxNotFoundError,
  AuthenticationError,
  CommandExitError,
  TimeoutError,
  SandboxError,
} = await import(process.env.E2B_MODULE);

function check(condition, what) {
  if (!condition) {
    throw new Error('check failed: ' + what);
  }
  console.log('ok ' + what);
}

async function rejects(promise, type, what) {
  try {
    await promise;
  } catch (e) {
    check(e instanceof type, what + ' (' + e.constructor.name + ': ' + e.message + ')');
    return;
  }
  check(false, what + ' (no error)');
}

const run = 'run-' + Math.random().toString(36).slice(2);
const sbx = await Sandbox.create({
  metadata: { suite: 'box', run },
  envs: { SANDBOX_VAR: 'from-create' },
  timeoutMs: 120_000,
});
check(/^[a-z0-9]+$/.test(sbx.sandboxId), 'create');

const again = await Sandbox.connect(sbx.sandboxId, { timeoutMs: 60_000 });
check(again.sandboxId === sbx.sandboxId, 'connect');

const listed = await Sandbox.list({ query: { metadata: { run }, state: ['running'] } }).nextItems();
check(listed.length === 1 && listed[0].sandboxId === sbx.sandboxId, 'list by metadata');
const other = await Sandbox.list({ query: { metadata: { run: 'x&y=z w' } } }).nextItems();
check(other.length === 0, 'list by other metadata');

const info = await sbx.getInfo();
check(info.metadata.run === run && info.state === 'running' && info.templateId === 'base', 'getInfo');
await sbx.setTimeout(30_000);
const shorter = await sbx.getInfo();
check(shorter.endAt.getTime() < info.endAt.getTime(), 'setTimeout moves the end');
check(await sbx.isRunning(), 'isRunning');

await sbx.files.write('/home/user/hello.txt', 'hello from e2b');
check((await sbx.files.read('/home/user/hello.txt')) === 'hello from e2b', 'write and read');
await sbx.files.write('relative.txt', 'home');
check((await sbx.files.read('/home/user/relative.txt')) === 'home', 'relative path in home');
check(await sbx.files.exists('/home/user/hello.txt'), 'exists');
check(!(await sbx.files.exists('/home/user/nope')), 'exists of a missing file');
check(await sbx.files.makeDir('/home/user/d/e'), 'makeDir');
check(!(await sbx.files.makeDir('/home/user/d/e')), 'makeDir of an existing directory');

const top = await sbx.files.list('/home/user');
const names = top.map((e) => e.name).sort();
check(names.includes('hello.txt') && names.includes('d'), 'list: ' + names.join(','));
const deep = await sbx.files.list('/home/user', { depth: 2 });
check(deep.some((e) => e.path === '/home/user/d/e' && e.type === 'dir'), 'list with depth 2');

const moved = await sbx.files.rename('/home/user/hello.txt', '/home/user/d/moved.txt');
check(moved.path === '/home/user/d/moved.txt', 'rename');
check(!(await sbx.files.exists('/home/user/hello.txt')), 'rename leaves no source');
await sbx.files.remove('/home/user/d');
check(!(await sbx.files.exists('/home/user/d')), 'remove');

const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
await sbx.files.write('/home/user/b.bin', bytes);
const back = await sbx.files.read('/home/user/b.bin', { format: 'bytes' });
check(back.length === 256 && back.every((b, i) => b === i), 'binary round trip (multipart)');
await sbx.files.write('/home/user/o.bin', bytes, { useOctetStream: true });
const octets = await sbx.files.read('/home/user/o.bin', { format: 'bytes' });
check(octets.every((b, i) => b === i) && octets.length === 256, 'binary round trip (octet-stream)');
await sbx.files.write('/home/user/g.bin', bytes, { gzip: true });
const gunzipped = await sbx.files.read('/home/user/g.bin', { format: 'bytes' });
check(gunzipped.every((b, i) => b === i) && gunzipped.length === 256, 'gzip upload');
const many = await sbx.files.write([
  { path: '/home/user/m/one', data: '1' },
  { path: '/home/user/m/two', data: '2' },
]);
check(many.length === 2 && (await sbx.files.read('/home/user/m/two')) === '2', 'write several');

// Signed URLs: the SDK builds them on the root of E2B_SANDBOX_URL's host, with no sandbox id.
const downloadUrl = await sbx.downloadUrl('/home/user/b.bin');
check(!downloadUrl.includes('/e2b/envd') && downloadUrl.includes('signature=v1_'), 'downloadUrl');
const downloaded = new Uint8Array(await (await fetch(downloadUrl)).arrayBuffer());
check(downloaded.length === 256 && downloaded.every((b, i) => b === i), 'download by a signed URL');
const form = new FormData();
form.append('file', new Blob([bytes]), 'up.bin');
const uploaded = await fetch(await sbx.uploadUrl('/home/user/up.bin'), { method: 'POST', body: form });
const upBack = await sbx.files.read('/home/user/up.bin', { format: 'bytes' });
check(uploaded.status === 200 && upBack.every((b, i) => b === i) && upBack.length === 256, 'upload by a signed URL');
const otherPath = downloadUrl.replace('b.bin', 'o.bin');
check((await fetch(otherPath)).status === 401, 'a signature for another path is refused');
check((await fetch(downloadUrl, { method: 'POST' })).status === 401, 'a read signature does not write');
const expiring = await sbx.downloadUrl('/home/user/b.bin', { useSignatureExpiration: 1 });
await new Promise((resolve) => setTimeout(resolve, 2500));
check((await fetch(expiring)).status === 401, 'an expired signed URL is refused');

await rejects(sbx.files.read('/home/user/nope'), FileNotFoundError, 'read of a missing file');

// Directory watching. Each step waits for its event before the next, since the server looks at the
// directory at intervals: changes within one interval are seen together.
async function until(condition, what) {
  for (let i = 0; i < 600 && !(await condition()); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  check(await condition(), what);
}
const watchProcesses = async () =>
  Number(
    (
      await sbx.commands.run(
        'n=0; for e in /proc/[0-9]*/environ; do grep -qz "^BOX_INTERVAL=" "$e" 2>/dev/null &&' +
          ' n=$((n+1)); done; echo $n',
      )
    ).stdout.trim(),
  );
await sbx.files.makeDir('/home/user/w/sub');
await sbx.files.write('/home/user/w/old.txt', 'old');
const deepEvents = [];
const flatEvents = [];
const deepWatch = await sbx.files.watchDir(
  '/home/user/w',
  (e) => deepEvents.push(e.type + ' ' + e.name),
  { recursive: true },
);
const flatWatch = await sbx.files.watchDir('w', (e) => flatEvents.push(e.type + ' ' + e.name));
check((await watchProcesses()) > 0, 'watchDir runs a watch in the sandbox');
await sbx.files.write('/home/user/w/old.txt', 'changed');
await until(() => deepEvents.includes('write old.txt'), 'watchDir sees a write');
await sbx.files.write('/home/user/w/new.txt', 'new');
await until(() => deepEvents.includes('create new.txt'), 'watchDir sees a new file');
await sbx.files.remove('/home/user/w/old.txt');
await until(() => deepEvents.includes('remove old.txt'), 'watchDir sees a remove');
await sbx.files.write('/home/user/w/sub/nested.txt', 'nested');
await until(() => deepEvents.includes('create sub/nested.txt'), 'recursive watchDir sees a nested file');
await sbx.files.write('/home/user/w/last.txt', 'last');
await until(() => flatEvents.includes('create last.txt'), 'watchDir without recursive');
check(
  flatEvents.includes('create new.txt') && !flatEvents.some((e) => e.includes('nested')),
  'watchDir without recursive sees no nested file: ' + flatEvents.join(','),
);
await deepWatch.stop();
await flatWatch.stop();
// The server hears that a stream was stopped when it next writes to it: an event hastens that.
await sbx.files.write('/home/user/w/after-stop.txt', 'x');
await until(async () => (await watchProcesses()) === 0, 'stop() ends the watch process');
await rejects(
  sbx.files.watchDir('/home/user/no-such-dir', () => {}),
  FileNotFoundError,
  'watchDir of a missing directory',
);

// Commands. The foreground command cannot end before the test saw its first chunk: it waits for a
// file that the stdout callback writes on seeing it.
const chunks = [];
const result = await sbx.commands.run(
  'echo first; echo oops >&2; while [ ! -e /home/user/go ]; do sleep 0.05; done; echo second',
  {
    onStdout: async (data) => {
      chunks.push(data);
      if (data.includes('first')) {
        await sbx.files.write('/home/user/go', '');
      }
    },
    onStderr: (data) => chunks.push(data),
  },
);
check(chunks.join('').includes('first'), 'output streamed before the command ended');
check(
  result.stdout === 'first\nsecond\n' && result.stderr === 'oops\n' && result.exitCode === 0,
  'foreground result: ' + JSON.stringify(result),
);
const env = await sbx.commands.run('echo "$HOME $PWD $SANDBOX_VAR $OWN"', { envs: { OWN: 'mine' } });
check(env.stdout === '/home/user /home/user from-create mine\n', 'environment: ' + env.stdout);
const inTmp = await sbx.commands.run('pwd', { cwd: '/tmp' });
check(inTmp.stdout === '/tmp\n', 'cwd');

try {
  await sbx.commands.run('echo out; exit 3');
  check(false, 'CommandExitError (no error)');
} catch (e) {
  check(
    e instanceof CommandExitError && e.exitCode === 3 && e.stdout === 'out\n',
    'CommandExitError (' + e.constructor.name + ': ' + e.message + ')',
  );
}

await rejects(
  sbx.commands.run('sleep 300 & echo $! > /home/user/child.pid; wait', { timeoutMs: 1500 }),
  TimeoutError,
  'timeoutMs expiry',
);
const gone = await sbx.commands.run(
  'while kill -0 "$(cat /home/user/child.pid)" 2>/dev/null; do sleep 0.1; done; echo gone',
);
check(gone.stdout === 'gone\n', "timeoutMs killed the command's tree");

const cat = await sbx.commands.run('cat', { background: true, stdin: true });
await cat.sendStdin('abc');
await cat.sendStdin('def');
await cat.closeStdin();
check((await cat.wait()).stdout === 'abcdef', 'background command: sendStdin, closeStdin, wait');

const sleeper = await sbx.commands.run('sleep 300', { background: true, timeoutMs: 0 });
const running = await sbx.commands.list();
check(
  running.some((p) => p.pid === sleeper.pid && p.cmd === '/bin/bash' && p.args.includes('sleep 300')),
  'commands.list: ' + JSON.stringify(running),
);
check(await sbx.commands.kill(sleeper.pid), 'commands.kill');
await rejects(sleeper.wait(), CommandExitError, 'wait of a killed command');
check(!(await sbx.commands.kill(987654)), 'commands.kill of an unknown pid');

const reader = await sbx.commands.run('read line; echo "got $line"', {
  background: true,
  stdin: true,
  timeoutMs: 0,
});
await reader.disconnect();
const heard = [];
const reconnected = await sbx.commands.connect(reader.pid, { onStdout: (d) => heard.push(d) });
await sbx.commands.sendStdin(reader.pid, 'hello\n');
const late = await reconnected.wait();
check(late.stdout === 'got hello\n' && heard.join('') === 'got hello\n', 'commands.connect after disconnect');

// A PTY: a terminal of the sandbox, typed into, resized, and left by exit.
const typed = [];
const seen = () => new TextDecoder().decode(Uint8Array.from(typed));
// Waits until the terminal showed `text` (a string, or a RegExp to match): its output may come in
// several chunks.
async function untilSeen(text) {
  const shown = () => (text instanceof RegExp ? text.test(seen()) : seen().includes(text));
  for (let i = 0; i < 200 && !shown(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return shown();
}
const encode = (text) => new TextEncoder().encode(text);
const terminal = await sbx.pty.create({ cols: 80, rows: 24, onData: (d) => typed.push(...d) });
await sbx.pty.sendInput(terminal.pid, encode('stty size; tty\n'));
check((await untilSeen('24 80')) && (await untilSeen(/\/dev\/pts\/[0-9]+/)), 'pty: a terminal of 80x24');
await sbx.pty.resize(terminal.pid, { cols: 100, rows: 30 });
await sbx.pty.sendInput(terminal.pid, encode('stty size\n'));
check(await untilSeen('30 100'), 'pty resize');
await sbx.pty.sendInput(terminal.pid, encode('exit\n'));
check((await terminal.wait()).exitCode === 0, 'pty exit');

// Metrics: the sandbox's own usage, measured now. A background command holds 64 MiB (tail keeps
// the unfinished last line of its input), which the memory used shows.
const [metric] = await sbx.getMetrics();
check(
  metric.cpuCount >= 1 &&
    metric.cpuUsedPct >= 0 &&
    metric.cpuUsedPct <= 100 &&
    metric.memUsed > 0 &&
    metric.memTotal >= metric.memUsed &&
    metric.diskUsed > 0 &&
    metric.diskTotal >= metric.diskUsed &&
    !Number.isNaN(metric.timestamp.getTime()),
  'getMetrics: ' + JSON.stringify(metric),
);
const holder = await sbx.commands.run('(head -c 67108864 /dev/zero; sleep 300) | tail -n 1', {
  background: true,
  timeoutMs: 0,
});
const memUsed = async () => (await Sandbox.getMetrics(sbx.sandboxId))[0].memUsed;
await until(async () => (await memUsed()) >= metric.memUsed + 48 * 1024 * 1024, 'getMetrics sees 64 MiB held');
await holder.kill();

// The network is set when a sandbox starts: an update to the network it has is served, a change
// is refused.
await sbx.updateNetwork({});
check(true, 'updateNetwork to the network it has');
await rejects(sbx.updateNetwork({ denyOut: ['192.0.2.1'] }), SandboxError, 'updateNetwork that changes it');

const wrongKey = { apiKey: 'wrong-key' };
await rejects(Sandbox.list(wrongKey).nextItems(), AuthenticationError, 'wrong API key (list)');
await rejects(Sandbox.create(wrongKey), AuthenticationError, 'wrong API key (create)');

await sbx.commands.run('echo before-pause > /home/user/paused.txt');
check(await sbx.pause(), 'pause');
check(!(await sbx.pause()), 'pause of a paused sandbox');
check((await sbx.getInfo()).state === 'paused', 'getInfo of a paused sandbox');
const pausedOnes = await Sandbox.list({ query: { metadata: { run }, state: ['paused'] } }).nextItems();
check(pausedOnes.length === 1 && pausedOnes[0].state === 'paused', 'list paused sandboxes');
const runningOnes = await Sandbox.list({ query: { metadata: { run }, state: ['running'] } }).nextItems();
check(runningOnes.length === 0, 'a paused sandbox is not listed running');
const resumed = await Sandbox.connect(sbx.sandboxId, { timeoutMs: 60_000 });
check((await resumed.getInfo()).state === 'running', 'connect resumes a paused sandbox');
check((await resumed.files.read('/home/user/paused.txt')) === 'before-pause\n', 'files after resume');

await sbx.files.write('/home/user/kept.txt', 'in the snapshot\n');
const snapshot = await sbx.createSnapshot();
check(snapshot.names.includes(snapshot.snapshotId), 'createSnapshot');
const named = await Sandbox.createSnapshot(sbx.sandboxId, { name: 'snap-' + run.slice(4) });
check(named.snapshotId === 'snap-' + run.slice(4), 'Sandbox.createSnapshot with a name');
await sbx.files.write('/home/user/kept.txt', 'after the snapshot\n');
const fromSnapshot = await Sandbox.create(snapshot.snapshotId, { metadata: { run }, timeoutMs: 60_000 });
check(
  (await fromSnapshot.files.read('/home/user/kept.txt')) === 'in the snapshot\n',
  'Sandbox.create(snapshotId) sees the files written before the snapshot',
);
const snapshots = await Sandbox.listSnapshots({ sandboxId: sbx.sandboxId }).nextItems();
check(
  snapshots.map((s) => s.snapshotId).sort().join() === [snapshot.snapshotId, named.snapshotId].sort().join(),
  'listSnapshots of a sandbox',
);
check(await Sandbox.deleteSnapshot(named.snapshotId), 'deleteSnapshot');
check(!(await Sandbox.deleteSnapshot(named.snapshotId)), 'deleteSnapshot of a deleted snapshot');
check(await Sandbox.deleteSnapshot(snapshot.snapshotId), 'deleteSnapshot of the unnamed one');
check((await Sandbox.listSnapshots({ sandboxId: sbx.sandboxId }).nextItems()).length === 0, 'listSnapshots after delete');
await fromSnapshot.kill();

const forks = await sbx.fork({ count: 2, timeoutMs: 60_000 });
check(forks.length === 2 && forks.every((f) => f instanceof Sandbox), 'fork');
await forks[0].files.write('/home/user/kept.txt', 'in fork 0\n');
check((await forks[1].files.read('/home/user/kept.txt')) === 'after the snapshot\n', 'forks see the source files');
check((await sbx.files.read('/home/user/kept.txt')) === 'after the snapshot\n', 'forks diverge from the source');
for (const fork of forks) {
  await fork.kill();
}
await rejects(Sandbox.fork('nosuchsandbox'), SandboxNotFoundError, 'fork of an unknown sandbox');

check(await sbx.kill(), 'kill');
check(!(await Sandbox.kill(sbx.sandboxId)), 'kill of a killed sandbox');
await rejects(Sandbox.connect(sbx.sandboxId), SandboxNotFoundError, 'connect to a killed sandbox');
check(!(await sbx.isRunning()), 'isRunning of a killed sandbox');
console.log('done');
