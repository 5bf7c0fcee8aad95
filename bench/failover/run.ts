// `node bench/failover/run.ts [runs]`: the failover drill (drill.ts), run
// after run, each on a cluster built and removed for it; prints a Markdown
// section for bench/RESULTS-failover.md with the machine and the date.
import os from 'node:os';
import { drillUnavailable } from './cluster.ts';
import { runFailoverDrill, type DrillFigures } from './drill.ts';

const unavailable = drillUnavailable();
if (unavailable) {
  console.error(`the failover drill ${unavailable}`);
  process.exit(2);
}
const runs = Number(process.argv[2] ?? 1);
const results: DrillFigures[] = [];
for (let i = 0; i < runs; i++) {
  const figures = await runFailoverDrill({ log: (line) => console.error(`[run ${i + 1}] ${line}`) });
  console.error(JSON.stringify(figures, null, 1));
  results.push(figures);
}
const pct = (ok: number, all: number) => (all ? `${((100 * ok) / all).toFixed(1)}%` : 'n/a');
const lines = [
  `## ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, ${runs} run(s)`,
  '',
  '| run | scenario | HAProxy routes to a primary after | writes back after | writes refused | reads 2xx in the gap | process exited | acked lost | doubled | given up on a key in use | events delivered |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
];
results.forEach((r, i) => {
  for (const s of r.scenarios) {
    lines.push(
      `| ${i + 1} | ${s.name} | ${s.routedMs === null ? 'n/a' : `${(s.routedMs / 1000).toFixed(1)} s`} | ${(s.writesBackMs / 1000).toFixed(1)} s | ${s.writesRefused} | ${pct(s.readsOkInGap, s.readsInGap)} (${s.readsOkInGap}/${s.readsInGap}) | ${r.processExited ? '**yes**' : 'no'} | ${r.lost} | ${r.doubled} | ${r.gaveUpOnKeyInUse} | ${r.delivered}/${r.events} |`,
    );
  }
});
lines.push(
  '',
  `Writes per run: ${results.map((r) => r.writes).join(', ')}; answers outside the contract: ${results.map((r) => r.badAnswers.length).join(', ')}.`,
);
console.log(lines.join('\n'));
