import type { FastifyPluginAsync } from 'fastify';
import { fuelBalance, listLedger, type publicLedgerEntry, spendPerDay } from '../../modules/fuel/service.ts';
import { agencyScope, MANAGERS, type PortalContext } from '../context.ts';
import { Layout } from '../layout.tsx';
import { pageAfter, pageOf } from '../paging.ts';
import { sendPage } from '../render.tsx';
import { Badge, Empty, PageHead, Pager, Panel, Stat, Table, When } from '../ui.tsx';

type Entry = ReturnType<typeof publicLedgerEntry>;
type Spend = Awaited<ReturnType<typeof spendPerDay>>[number];

export const CHART_DAYS = 30;
const SERIES = [
  { reason: 'sms', label: 'SMS', css: 'sms' },
  { reason: 'gist', label: 'AI gists', css: 'gist' },
  { reason: 'adjustment', label: 'Adjustments', css: 'other' },
] as const;

/** The last `CHART_DAYS` UTC days, oldest first, as `YYYY-MM-DD`. */
function chartDays(now = new Date()): string[] {
  return Array.from({ length: CHART_DAYS }, (_, index) =>
    new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (CHART_DAYS - 1 - index)))
      .toISOString()
      .slice(0, 10),
  );
}

/** Spend per reason per day as stacked bars, drawn on the server: no chart library, no script. */
export function SpendChart(props: { spend: Spend[] }) {
  const days = chartDays();
  const perDay = new Map<string, Map<string, number>>();
  for (const row of props.spend) {
    const day = perDay.get(row.day) ?? new Map<string, number>();
    day.set(row.reason, (day.get(row.reason) ?? 0) + Math.max(0, row.spent));
    perDay.set(row.day, day);
  }
  const totals = days.map((day) => [...(perDay.get(day)?.values() ?? [])].reduce((a, b) => a + b, 0));
  const top = Math.max(1, ...totals);
  const [width, height, left, bottom, top0] = [720, 200, 40, 22, 8];
  const plot = height - bottom - top0;
  const slot = (width - left) / days.length;
  const total = totals.reduce((a, b) => a + b, 0);
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-labelledby="spend-title spend-desc">
        <title id="spend-title">FUEL spent per day, last {CHART_DAYS} days</title>
        <desc id="spend-desc">
          {`${total} FUEL spent in ${CHART_DAYS} days; the most in one day was ${Math.max(0, ...totals)}.`}
        </desc>
        <line class="axis" x1={left} y1={height - bottom} x2={width} y2={height - bottom} />
        <text x={left - 6} y={top0 + 10} text-anchor="end">
          {top}
        </text>
        <text x={left - 6} y={height - bottom} text-anchor="end">
          0
        </text>
        {days.map((day, index) => {
          let y = height - bottom;
          const x = left + index * slot + slot * 0.15;
          return (
            <g>
              {SERIES.map((series) => {
                const spent = perDay.get(day)?.get(series.reason) ?? 0;
                if (spent === 0) return null;
                const barHeight = (spent / top) * plot;
                y -= barHeight;
                return (
                  <rect class={`bar ${series.css}`} x={x} y={y} width={slot * 0.7} height={barHeight}>
                    <title>{`${day}: ${spent} FUEL on ${series.label}`}</title>
                  </rect>
                );
              })}
              {index % 5 === 0 && (
                <text x={x} y={height - 6}>
                  {day.slice(5)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption class="legend">
        {SERIES.map((series) => (
          <span>
            <span class={`swatch ${series.css}`} aria-hidden="true" />
            {series.label}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

const REASONS: Record<string, { label: string; kind?: 'ok' | 'warn' | 'brand' }> = {
  grant: { label: 'Grant', kind: 'ok' },
  adjustment: { label: 'Adjustment', kind: 'warn' },
  sms: { label: 'SMS', kind: 'brand' },
  gist: { label: 'AI gist', kind: 'brand' },
  refund: { label: 'Refund', kind: 'ok' },
};

function FuelPage(props: {
  ctx: PortalContext;
  balance: number;
  spend: Spend[];
  entries: Entry[];
  next: string | null;
}) {
  const spent30 = props.spend.reduce((sum, row) => sum + row.spent, 0);
  return (
    <Layout ctx={props.ctx} title="FUEL">
      <PageHead title="FUEL" sub="The agency's credit: SMS segments and AI gists spend it." />
      <div class="stats">
        <Stat
          label="Balance"
          value={props.balance.toLocaleString('en-US')}
          hint="FUEL available to every client"
        />
        <Stat label={`Spent, last ${CHART_DAYS} days`} value={spent30.toLocaleString('en-US')} />
      </div>
      <Panel title={`Spend per day, last ${CHART_DAYS} days`}>
        <SpendChart spend={props.spend} />
      </Panel>
      <Panel title="Ledger">
        <Table
          label="FUEL ledger"
          head={[
            'Time',
            'Reason',
            { label: 'Amount', num: true },
            { label: 'Balance after', num: true },
            'Cause',
          ]}
          rows={props.entries.map((entry) => (
            <tr>
              <td>
                <When at={entry.created_at} />
              </td>
              <td>
                <Badge kind={REASONS[entry.reason]?.kind}>
                  {REASONS[entry.reason]?.label ?? entry.reason}
                </Badge>
              </td>
              <td class="num">{entry.amount > 0 ? `+${entry.amount}` : entry.amount}</td>
              <td class="num">{entry.balance_after}</td>
              <td class="small">
                {entry.note ??
                  (entry.reference_type ? `${entry.reference_type} ${entry.reference_id ?? ''}` : '—')}
              </td>
            </tr>
          ))}
          empty={<Empty title="No FUEL movements yet">Grants and spending show here.</Empty>}
        />
        <Pager path="/portal/fuel" next={props.next} />
      </Panel>
    </Layout>
  );
}

export const fuelPages: FastifyPluginAsync = async (app) => {
  const { db } = app.platform;
  app.get('/fuel', async (request, reply) => {
    const scope = agencyScope(request, MANAGERS);
    const [balance, spend, ledger] = await Promise.all([
      fuelBalance(db, scope.orgId),
      spendPerDay(db, scope.orgId, CHART_DAYS),
      listLedger(db, scope, pageAfter(request.query)),
    ]);
    const { rows, next } = pageOf(ledger);
    return sendPage(
      reply,
      <FuelPage ctx={request.portal} balance={balance} spend={spend} entries={rows} next={next} />,
    );
  });
};
