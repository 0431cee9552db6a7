import type { FastifyInstance } from 'fastify';
import { errors } from '../platform/http/errors.ts';
import type { RouteEntry } from '../platform/http/route-table.ts';
import { buildCatalog, type ToolDefinition } from './catalog.ts';

/** How a client asked for the catalog on the endpoint URL. */
export interface ViewOptions {
  toolNames: 'dotted' | 'underscore';
  /** First name segments to keep, or null for all. */
  toolsets: readonly string[] | null;
  readOnly: boolean;
}

/** Views are few in practice (a client keeps its URL); the bound keeps odd query strings from growing memory. */
const MAX_CACHED_VIEWS = 256;

/** A tool as `tools/list` returns it. */
export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: ToolDefinition['inputSchema'];
  annotations: ToolDefinition['annotations'];
}

/** One narrowed, named form of the catalog: what `tools/list` returns and what `tools/call` accepts. */
export interface CatalogView {
  tools: readonly ListedTool[];
  byName: ReadonlyMap<string, ToolDefinition>;
}

/** Where the catalog comes from: the app's route table and shared schemas, and the API version. */
export interface CatalogSource {
  routes: readonly RouteEntry[];
  sharedSchemas: Record<string, Record<string, unknown>>;
  version: string;
}

/** The catalog source of a ready app (the version is the one the OpenAPI document states). */
export function catalogSource(app: FastifyInstance): CatalogSource {
  return {
    routes: app.routeTable,
    sharedSchemas: app.getSchemas() as CatalogSource['sharedSchemas'],
    version: (app.swagger() as { info?: { version?: string } }).info?.version ?? '',
  };
}

/**
 * Builds each view of the catalog once. The catalog is read lazily, on the first request after the
 * app is ready, because the route table only then holds every route.
 */
export class CatalogViews {
  private catalog: readonly ToolDefinition[] | null = null;
  private version = '';
  private readonly views = new Map<string, CatalogView>();

  constructor(private readonly source: () => CatalogSource) {}

  all(): readonly ToolDefinition[] {
    if (!this.catalog) {
      const source = this.source();
      this.catalog = buildCatalog(source.routes, source.sharedSchemas);
      this.version = source.version;
    }
    return this.catalog;
  }

  /** The API version the tools mirror, reported as the MCP server's version. */
  apiVersion(): string {
    this.all();
    return this.version;
  }

  /** The view for these options; an unknown toolset is a 400 listing the known ones. */
  view(options: ViewOptions): CatalogView {
    const key = `${options.toolNames}|${options.toolsets?.join(',') ?? '*'}|${options.readOnly}`;
    const cached = this.views.get(key);
    if (cached) return cached;

    const catalog = this.all();
    if (options.toolsets) {
      const known = [...new Set(catalog.map((tool) => tool.toolset))].sort();
      const unknown = options.toolsets.filter((toolset) => !known.includes(toolset));
      if (unknown.length) {
        throw errors.invalidRequest(`Unknown toolset: ${unknown.join(', ')}.`, { known_toolsets: known });
      }
    }
    const selected = catalog.filter(
      (tool) =>
        (!options.toolsets || options.toolsets.includes(tool.toolset)) &&
        (!options.readOnly || tool.annotations.readOnlyHint),
    );
    const nameOf = (tool: ToolDefinition) =>
      options.toolNames === 'underscore' ? tool.underscoreName : tool.name;
    const view: CatalogView = {
      tools: selected.map((tool) => ({
        name: nameOf(tool),
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        annotations: tool.annotations,
      })),
      byName: new Map(selected.map((tool) => [nameOf(tool), tool])),
    };
    if (this.views.size >= MAX_CACHED_VIEWS) this.views.delete(this.views.keys().next().value as string);
    this.views.set(key, view);
    return view;
  }
}

/** Reads `?tool_names=`, `?toolsets=` and `?read_only=` into view options (the route's schema validated them). */
export function viewOptions(query: {
  tool_names?: string;
  toolsets?: string;
  read_only?: boolean;
}): ViewOptions {
  const toolsets = query.toolsets
    ?.split(',')
    .map((toolset) => toolset.trim())
    .filter(Boolean);
  return {
    toolNames: query.tool_names === 'underscore' ? 'underscore' : 'dotted',
    toolsets: toolsets?.length ? [...new Set(toolsets)].sort() : null,
    readOnly: query.read_only === true,
  };
}
