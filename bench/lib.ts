import { readdirSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type pg from 'pg';

export interface Measurement {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  /** CPU time (user + system) the serving process spent per request, when it is known. */
  serverCpuUs?: number;
  /** CPU time PostgreSQL (all its processes) spent per request during the measurement, when it is known. */
  databaseCpuUs?: number;
}

export interface Target {
  name: string;
  pass: boolean;
  detail: string;
}

export interface Section {
  title: string;
  measurements: Measurement[];
  targets: Target[];
  notes?: string[];
}

export interface BenchContext {
  apiUrl: string;
  feedUrl: string;
  ceilingUrl: string;
  adminToken: string;
  databaseUrl: string;
  pool: pg.Pool;
  /** The bare-route ceiling, measured once per run and shared by every scenario. */
  ceiling(): Promise<Measurement>;
  measure(name: string, options: MeasureOptions): Promise<Measurement>;
  admin<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  /** An org with an agency key of a very high rate limit. */
  tenant(): Promise<{ orgId: string; agencyKey: string; headers: Record<string, string> }>;
  // The soak samples the processes' memory
  /** Process ids of the service's roles. */
  pids?: { api?: number; worker?: number };
}

export interface MeasureOptions {
  url: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  /** A fresh request per call, for bodies that must differ (new identities). */
  requests?: autocannon.Request[];
  connections?: number;
  durationSeconds?: number;
  /** Headers of each connection, in turn (a session cookie per person); on top of `headers`. */
  connectionHeaders?: Record<string, string>[];
  /** The process serving `url`: the CPU it spends per request is reported beside the rate. */
  serverPid?: number;
  /** PostgreSQL's postmaster: the CPU it and its backends spend per request is reported too. */
  databasePid?: number;
}

/** Linux's USER_HZ: the unit of the CPU times in /proc/<pid>/stat. */
const CLOCK_TICKS_PER_SECOND = 100;

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces), or null. */
function statFields(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

const ticksToUs = (ticks: number) => (ticks * 1e6) / CLOCK_TICKS_PER_SECOND;

/** User + system CPU time of a process so far, in µs, or null where /proc cannot tell. */
export function cpuTimeUs(pid: number | undefined): number | null {
  const fields = pid ? statFields(pid) : null;
  return fields ? ticksToUs(Number(fields[11]) + Number(fields[12])) : null;
}

/**
 * User + system CPU time so far of a process and all its children, in µs: those still running, and
 * those it has reaped (a PostgreSQL backend whose connection closed), or null where /proc cannot tell.
 */
export function treeCpuTimeUs(pid: number | undefined): number | null {
  const own = pid ? statFields(pid) : null;
  if (!own) return null;
  // utime, stime, and the reaped children's cutime, cstime.
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields && Number(fields[1]) === pid) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticksToUs(ticks);
}

export async function measure(name: string, options: MeasureOptions): Promise<Measurement> {
  const cpuBefore = cpuTimeUs(options.serverPid);
  const databaseCpuBefore = treeCpuTimeUs(options.databasePid);
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: { 'content-type': 'application/json', ...(options.headers ?? {}) },
    body: options.body,
    requests: options.requests,
    connections: options.connections ?? 50,
    duration: options.durationSeconds ?? 8,
    ...(options.connectionHeaders ? { setupClient: eachConnection(options) } : {}),
  });
  return {
    name,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    serverCpuUs: perRequest(cpuBefore, cpuTimeUs(options.serverPid), result.requests.total),
    databaseCpuUs: perRequest(databaseCpuBefore, treeCpuTimeUs(options.databasePid), result.requests.total),
  };
}

function perRequest(before: number | null, after: number | null, requests: number) {
  if (before === null || after === null || requests === 0) return undefined;
  return Math.round((after - before) / requests);
}

function eachConnection(options: MeasureOptions) {
  const all = options.connectionHeaders!;
  let next = 0;
  return (client: autocannon.Client) =>
    client.setHeaders({
      'content-type': 'application/json',
      ...(options.headers ?? {}),
      ...all[next++ % all.length],
    });
}

export function ratioTarget(
  name: string,
  measured: Measurement,
  ceiling: Measurement,
  minimum: number,
): Target {
  const ratio = measured.requestsPerSecond / Math.max(1, ceiling.requestsPerSecond);
  // The CPU each request costs its server is steadier than a rate on a shared machine: shown beside it.
  const cpu = (label: string, of: (m: Measurement) => number | undefined) => {
    const [theirs, ours] = [of(ceiling), of(measured)];
    return theirs && ours
      ? `; ${label} CPU per request ${theirs} / ${ours} µs = ${(theirs / ours).toFixed(2)}`
      : '';
  };
  return {
    name,
    pass: ratio >= minimum && measured.errors === 0 && measured.non2xx === 0,
    detail: `${measured.requestsPerSecond} / ${ceiling.requestsPerSecond} req/s = ${ratio.toFixed(2)} (target ≥ ${minimum})${cpu('server', (m) => m.serverCpuUs)}${cpu('PostgreSQL', (m) => m.databaseCpuUs)}${
      measured.non2xx ? `; ${measured.non2xx} non-2xx` : ''
    }`,
  };
}

export function latencyTarget(name: string, valueMs: number, maximumMs: number): Target {
  return { name, pass: valueMs < maximumMs, detail: `${valueMs} ms (target < ${maximumMs} ms)` };
}
