// Drives envd at E2B_SANDBOX_URL with a real Connect client (npm's @connectrpc/connect-node) in
// the binary codec (application/proto, application/connect+proto), with the message descriptors
// E2B's SDK ships (read from its ESM entry point, E2B_MODULE, in the cache scripts/e2b-sdk
// installs). The sandbox is made and killed through the control plane at E2B_API_URL. Prints
// "ok <check>" for each check that passed and exits non-zero at the first that did not.
import { readFileSync } from 'node:fs';

const modules = process.env.E2B_MODULE.replace(/e2b\/dist\/index\.mjs$/, '');
const { createClient, ConnectError, Code } = await import(
  modules + '@connectrpc/connect/dist/esm/index.js'
);
const { createConnectTransport } = await import(
  modules + '@connectrpc/connect-node/dist/esm/index.js'
);
const { fileDesc, serviceDesc } = await import(
  modules + '@bufbuild/protobuf/dist/esm/codegenv2/index.js'
);
const { file_google_protobuf_timestamp } = await import(
  modules + '@bufbuild/protobuf/dist/esm/wkt/index.js'
);

function check(condition, what) {
  if (!condition) {
    throw new Error('check failed: ' + what);
  }
  console.log('ok ' + what);
}

const sdk = readFileSync(new URL(process.env.E2B_MODULE), 'utf8');
const services = {};
for (const [, encoded] of sdk.matchAll(/serviceDesc\(\/\*\s*@__PURE__\s*\*\/\s*fileDesc\("([^"]+)"/g)) {
  const service = serviceDesc(fileDesc(encoded, [file_google_protobuf_timestamp]), 0);
  services[service.typeName] = service;
}
check(services['filesystem.Filesystem'] && services['process.Process'], "the SDK's descriptors");

const api = process.env.E2B_API_URL;
const key = { 'X-API-Key': process.env.E2B_API_KEY };
const created = await (
  await fetch(api + '/v2/sandboxes', {
    method: 'POST',
    headers: { ...key, 'Content-Type': 'application/json' },
    body: '{}',
  })
).json();

const types = new Set();
const transport = createConnectTransport({
  baseUrl: process.env.E2B_SANDBOX_URL,
  httpVersion: '1.1',
  useBinaryFormat: true,
  interceptors: [
    (next) => async (request) => {
      request.header.set('E2b-Sandbox-Id', created.sandboxID);
      request.header.set('X-Access-Token', created.envdAccessToken);
      const response = await next(request);
      types.add(response.header.get('content-type'));
      return response;
    },
  ],
});
const files = createClient(services['filesystem.Filesystem'], transport);
const processes = createClient(services['process.Process'], transport);

try {
  const events = [];
  for await (const message of processes.start({
    process: {
      cmd: '/bin/sh',
      args: ['-c', 'mkdir -p bin && printf hello > bin/f.txt && echo written; exit 3'],
    },
  })) {
    events.push(message.event.event);
  }
  const out = new TextDecoder().decode(
    Buffer.concat(events.filter((e) => e.case === 'data').map((e) => e.value.output.value)),
  );
  const end = events.at(-1);
  check(
    events[0].case === 'start' && events[0].value.pid > 0 && out === 'written\n',
    'Start streams in binary: ' + JSON.stringify(out),
  );
  check(end.case === 'end' && end.value.exitCode === 3 && end.value.exited, 'Start ends in binary');

  const listed = await files.listDir({ path: '/home/user/bin', depth: 1 });
  check(
    listed.entries.length === 1 &&
      listed.entries[0].name === 'f.txt' &&
      listed.entries[0].size === 5n &&
      listed.entries[0].type === 1 &&
      listed.entries[0].modifiedTime.seconds > 0n,
    'ListDir in binary',
  );
  const stat = await files.stat({ path: 'bin/f.txt' });
  check(
    stat.entry.path === '/home/user/bin/f.txt' && stat.entry.permissions.startsWith('-rw'),
    'Stat in binary',
  );
  try {
    await files.stat({ path: '/home/user/nope' });
    check(false, 'Stat of a missing file (no error)');
  } catch (e) {
    check(e instanceof ConnectError && e.code === Code.NotFound, 'Stat of a missing file: ' + e);
  }
  const stop = new AbortController();
  const watch = files.watchDir({ path: '/home/user/bin' }, { signal: stop.signal });
  const first = await watch[Symbol.asyncIterator]().next();
  stop.abort();
  check(first.value.event.case === 'start', 'WatchDir starts in binary');
  check(
    types.has('application/proto') && types.has('application/connect+proto'),
    'answered as ' + [...types].join(', '),
  );
} finally {
  await fetch(api + '/sandboxes/' + created.sandboxID, { method: 'DELETE', headers: key });
}
console.log('done');
