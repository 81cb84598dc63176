import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { registerSimwebCommand, simwebOptionsFromFlags } from '../../src/cli/commands/simweb.js';
import { Resolver } from 'node:dns/promises';
import { request } from 'undici';

test('flags → options (table)', () => {
  const cases: Array<[Parameters<typeof simwebOptionsFromFlags>[0], unknown]> = [
    [{}, { preset: 'demo', params: {}, log: true }],
    [{ preset: 'tiny', seed: '5', httpPort: '8080', dnsPort: '5353' }, { preset: 'tiny', params: {}, log: true, seed: 5, httpPort: 8080, dnsPort: 5353 }],
    [{ param: ['plds=7', 'robotsAgent=foo', 'robots={"rules":0.5}'], log: false },
      { preset: 'demo', params: { plds: 7, robotsAgent: 'foo', robots: { rules: 0.5 } }, log: false }],
  ];
  for (const [flags, want] of cases) assert.deepEqual(simwebOptionsFromFlags(flags), want);
  assert.throws(() => simwebOptionsFromFlags({ preset: 'huge' }), /preset/);
  assert.throws(() => simwebOptionsFromFlags({ httpPort: '70000' }), /http-port/);
  assert.throws(() => simwebOptionsFromFlags({ param: ['novalue'] }), /key=value/);
  const p = new Command();
  registerSimwebCommand(p);
  assert.ok(p.commands.some((c) => c.name() === 'simweb'));
});

test('`simweb --preset tiny` prints seeds and DNS, serves, and stops cleanly on SIGTERM', async () => {
  const script = fileURLToPath(new URL('./cli-entry.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, 'simweb', '--preset', 'tiny', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d) => { out += d; if (out.includes('\n')) resolve(out.split('\n')[0]!); });
    child.on('exit', (c) => reject(new Error(`exited ${c}: ${err}`)));
  });
  const info = JSON.parse(line) as { dns: string; httpPort: number; seeds: string[] };
  const r = new Resolver({ timeout: 1000, tries: 1 });
  r.setServers([info.dns]);
  const [ip] = await r.resolve4(new URL(info.seeds[0]!).hostname);
  const seed = new URL(info.seeds[0]!);
  const res = await request(`http://${ip}:${info.httpPort}${seed.pathname}`, { headers: { host: seed.host } });
  assert.equal(res.statusCode, 200);
  assert.match(await res.body.text(), /<title>www\.pld0\.test page 0<\/title>/);
  const byIp = await request(`http://${ip}:${info.httpPort}/p/0`);
  await byIp.body.dump();
  assert.equal(byIp.statusCode, 404, 'Host: <ip> is not a simulated host');
  const code = await new Promise<number | null>((resolve) => { child.on('exit', resolve); child.kill('SIGTERM'); });
  assert.equal(code, 0, err);
  assert.match(err, /stopped after \d+ requests/);
});
