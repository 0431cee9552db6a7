import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's Prometheus series, served at `GET /metrics`. A module adds its own through
 * `metrics.counter()`, `metrics.gauge()` and `metrics.histogram()`, at module level:
 *
 *   const sent = metrics.counter('sms_messages_sent_total', 'SMS handed to the carrier.', ['outcome']);
 *   sent.inc({ outcome: 'accepted' });
 *
 * Asking twice for one name returns the same series, so code loaded by several apps in one process
 * (tests) shares it. Labels must take few values: a route pattern, an outcome, a task name; never a
 * tenant id, a record id or a raw path, or the series multiply without bound.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/** Latency buckets in seconds, from a fast indexed read to a slow receiver. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

function existing<T>(name: string): T | undefined {
  return registry.getSingleMetric(name) as T | undefined;
}

export const metrics = {
  counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return existing<Counter<L>>(name) ?? new Counter({ name, help, labelNames, registers: [registry] });
  },

  gauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    return existing<Gauge<L>>(name) ?? new Gauge({ name, help, labelNames, registers: [registry] });
  },

  histogram<L extends string = never>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
    buckets: number[] = LATENCY_BUCKETS,
  ): Histogram<L> {
    return (
      existing<Histogram<L>>(name) ??
      new Histogram({ name, help, labelNames, buckets, registers: [registry] })
    );
  },
};
