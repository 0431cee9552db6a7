import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString } from 'pino';

/**
 * Fastify gives every request a child logger bound to its id. Building one (pino serialises and
 * redacts the bindings) cost more than the rest of an authenticated read's own work, and most
 * requests never log: this one is built on the first line a request logs.
 */
class LazyRequestLogger {
  private built: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    this.built ??= this.parent.child(this.bindings, this.options);
    return this.built;
  }

  get level(): LevelWithSilentOrString {
    return this.built?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: LevelWithSilentOrString) {
    this.logger.level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }

  // Methods on the prototype, not arrow fields: a request pays for one small object, not seven closures.
  fatal(...args: Parameters<FastifyBaseLogger['fatal']>): void {
    this.logger.fatal(...args);
  }
  error(...args: Parameters<FastifyBaseLogger['error']>): void {
    this.logger.error(...args);
  }
  warn(...args: Parameters<FastifyBaseLogger['warn']>): void {
    this.logger.warn(...args);
  }
  info(...args: Parameters<FastifyBaseLogger['info']>): void {
    this.logger.info(...args);
  }
  debug(...args: Parameters<FastifyBaseLogger['debug']>): void {
    this.logger.debug(...args);
  }
  trace(...args: Parameters<FastifyBaseLogger['trace']>): void {
    this.logger.trace(...args);
  }
  silent(): void {}
}

/** Fastify's `childLoggerFactory`: the request's logger, built when it first logs. */
export function lazyRequestLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyRequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}
