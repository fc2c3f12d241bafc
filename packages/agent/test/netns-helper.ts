// Runs inside a test network namespace (`ip netns exec … node netns-helper.js <command>`), because
// the test process itself stays in the host namespace. Each command prints one JSON line.
import http from 'node:http';
import net from 'node:net';

const [command, ...args] = process.argv.slice(2);
const print = (v: unknown) => process.stdout.write(`${JSON.stringify(v)}\n`);

/** `request URL KEY METHOD LOCAL [BODY]`: one control or metrics call from address LOCAL. */
function request(url: string, key: string, method: string, localAddress: string, body?: string) {
  const req = http.request(
    url,
    {
      method,
      localAddress,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      timeout: 5000,
    },
    (res) => {
      let text = '';
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () => {
        let json: unknown = null;
        try {
          json = JSON.parse(text);
        } catch {}
        print({ status: res.statusCode, json });
      });
    },
  );
  req.on('timeout', () => req.destroy(new Error('timeout')));
  req.on('error', (err) => print({ status: 0, error: err.message }));
  req.end(body);
}

/** `probe HOST PORT LOCAL TIMEOUT_MS`: can a new connection be opened from LOCAL? */
function probe(host: string, port: number, localAddress: string, timeoutMs: number) {
  const socket = net.connect({ host, port, localAddress });
  const timer = setTimeout(() => {
    socket.destroy();
    print({ ok: false, error: 'timeout' });
  }, timeoutMs);
  socket.on('connect', () => {
    clearTimeout(timer);
    socket.destroy();
    print({ ok: true });
  });
  socket.on('error', (err) => {
    clearTimeout(timer);
    print({ ok: false, error: err.message });
  });
}

/** `flood HOST PORT LOCAL COUNT HOLD_MS`: keeps COUNT connections open from LOCAL, reopening closed ones. */
function flood(host: string, port: number, localAddress: string, count: number, holdMs: number) {
  const started = Date.now();
  print({ started_at: started });
  const one = () => {
    if (Date.now() - started > holdMs) return;
    const s = net.connect({ host, port, localAddress });
    s.setTimeout(holdMs);
    s.on('error', () => {});
    s.on('close', () => {
      setTimeout(one, 200);
    });
    s.on('timeout', () => s.destroy());
  };
  for (let i = 0; i < count; i++) one();
  setTimeout(() => process.exit(0), holdMs).unref();
  setInterval(() => {}, 1000);
}

if (command === 'request') request(args[0]!, args[1]!, args[2]!, args[3]!, args[4]);
else if (command === 'probe') probe(args[0]!, Number(args[1]), args[2]!, Number(args[3]));
else if (command === 'flood') flood(args[0]!, Number(args[1]), args[2]!, Number(args[3]), Number(args[4]));
else {
  process.stderr.write(`unknown command ${command}\n`);
  process.exit(2);
}
