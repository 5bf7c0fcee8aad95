// The built-in courier simulator: make each courier accept, refuse, not answer, throttle or fail.
import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { admin } from '../api';
import type { OperatorInput } from '../api-types';
import { useServiceInfo } from '../service-info';
import { ErrorNote } from '../components/ui';
import { queryKeys } from '../query-keys';

type Mode = OperatorInput<'POST', '/admin/api/courier-sim/{slug}/mode'>['body']['mode'];

const MODES = [
  ['ok', 'Accepts'],
  ['refuse', 'Refuses (courier says no)'],
  ['down', 'Down (does not answer)'],
  ['throttle', 'Throttles (answers 429)'],
  ['error', 'Fails (answers 500)'],
] as const satisfies ReadonlyArray<readonly [Mode, string]>;

export function CouriersPage() {
  const info = useServiceInfo();
  const queries = useQueryClient();
  // The choice shows at once; the service's facts, read again, settle it.
  const [chosen, setChosen] = useState<Record<string, string>>({});
  const setMode = useMutation({
    mutationFn: ({ slug, mode }: { slug: string; mode: Mode }) =>
      admin('POST', '/admin/api/courier-sim/{slug}/mode', { path: { slug }, body: { mode } }),
    onSettled: async (_answer, _error, { slug }) => {
      await queries.invalidateQueries({ queryKey: queryKeys.info() });
      setChosen(({ [slug]: _settled, ...others }) => others);
    },
  });
  if (info.data && info.data.courier_mode !== 'simulator') {
    return (
      <section>
        <h1>Courier simulator</h1>
        <p className="empty">
          COURIER_MODE is {info.data.courier_mode}: Merx talks to the couriers at COURIER_A_URL, COURIER_B_URL and COURIER_C_URL, and no simulator
          runs here.
        </p>
      </section>
    );
  }
  return (
    <section className="stack">
      <h1>Courier simulator</h1>
      <p className="muted">
        The three couriers live in this process and speak their own HTTP protocols. Report status events for a waybill from its shipment page.
        courier_c pushes events and has no cancel API; courier_a and courier_b are polled every 15 minutes.
      </p>
      <ErrorNote error={info.error ?? setMode.error} />
      <div className="grid three">
        {info.data?.couriers.map((c) => (
          <fieldset key={c.slug} className="card modes">
            <legend>{c.slug}</legend>
            {MODES.map(([mode, label]) => (
              <label key={mode} className="inline">
                <input
                  type="radio"
                  name={c.slug}
                  value={mode}
                  checked={(chosen[c.slug] ?? c.mode) === mode}
                  onChange={() => {
                    setChosen({ ...chosen, [c.slug]: mode });
                    setMode.mutate({ slug: c.slug, mode });
                  }}
                />
                {label}
              </label>
            ))}
          </fieldset>
        ))}
      </div>
    </section>
  );
}
