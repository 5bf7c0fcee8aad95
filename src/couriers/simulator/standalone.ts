// `npx merx courier-sim`: the simulator as its own server, for a service run
// with COURIER_<A|B|C>_URL pointing at it. Its modes are set over HTTP here
// (POST /_sim/{slug}/mode {mode}) since the operator API lives in the service.
import Fastify from 'fastify';
import { registerCourierSimulator } from './routes.ts';
import { SIM_MODES, type SimMode } from './simulated-courier.ts';
import { SIMULATED_COURIERS } from './simulated-couriers.ts';
import { SimulatorState } from './state.ts';
import { MemorySimulatorStore } from './memory-store.ts';

export async function startStandaloneSimulator(port: number, host = '127.0.0.1'): Promise<string> {
  return (await standaloneSimulator(port, host)).url;
}

export async function standaloneSimulator(port: number, host = '127.0.0.1') {
  const state = new SimulatorState(SIMULATED_COURIERS, new MemorySimulatorStore());
  const app = Fastify({ logger: false });
  registerCourierSimulator(app, state, '');
  app.post('/_sim/:slug/mode', async (request, reply) => {
    const { slug } = request.params as { slug: string };
    const { mode, times } = (request.body ?? {}) as { mode?: SimMode; times?: number };
    const countOk = times === undefined || (Number.isInteger(times) && times >= 1);
    if (!state.plays(slug) || !mode || !SIM_MODES.includes(mode) || !countOk) {
      return reply
        .code(400)
        .send({ error: `expected /_sim/${[...state.couriers.keys()].join('|')}/mode with {mode: ${SIM_MODES.join('|')}, times?: integer >= 1}` });
    }
    await state.setMode(slug, mode, times);
    return { slug, mode };
  });
  app.get('/_sim/:slug/calls', async (request, reply) => {
    const { slug } = request.params as { slug: string };
    if (!state.plays(slug)) return reply.code(404).send({ error: `the simulator does not play ${slug}` });
    return { data: await state.callsOf(slug) };
  });
  await app.listen({ port, host });
  const address = app.server.address();
  return { url: `http://${host}:${typeof address === 'object' && address ? address.port : port}`, close: () => app.close() };
}
