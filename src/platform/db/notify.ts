import pg from 'pg';

/**
 * Listens on PostgreSQL channels over one dedicated connection, reconnecting after a drop.
 * `onReset` runs after every (re)connect, because notifications sent while disconnected are lost.
 */
export class NotificationListener {
  private client: pg.Client | null = null;
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly url: string,
    private readonly handlers: Record<string, (payload: string) => void>,
    private readonly onReset: () => void = () => {},
  ) {}

  async start(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.url,
      application_name: 'agency-platform-listener',
    });
    // A client replaced after a drop may still report its own end: only the current one counts.
    const lost = () => {
      if (this.client === client) this.reconnect();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => this.handlers[message.channel]?.(message.payload ?? ''));
    this.client = client;
    await client.connect();
    for (const channel of Object.keys(this.handlers))
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    this.onReset();
  }

  private reconnect(): void {
    if (this.closed || this.retryTimer) return;
    this.client?.end().catch(() => {});
    this.client = null;
    this.onReset();
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.start().catch(() => this.reconnect());
    }, 1000);
    this.retryTimer.unref();
  }

  async stop(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.client?.end().catch(() => {});
  }
}
