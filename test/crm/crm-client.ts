import type { TestApp } from '../helpers.ts';

export interface Reply {
  status: number;
  body: any;
  headers: Record<string, unknown>;
}

export type Call = (
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  payload?: unknown,
  headers?: Record<string, string>,
) => Promise<Reply>;

/** Calls `/v1` with one tenant's headers; the body comes back parsed. */
export function caller(t: TestApp, tenantHeaders: Record<string, string>): Call {
  return async (method, url, payload, headers = {}) => {
    const response = await t.app.inject({
      method,
      url: `/v1${url}`,
      headers: { ...tenantHeaders, ...headers },
      ...(payload !== undefined ? { payload: payload as object } : {}),
    });
    return {
      status: response.statusCode,
      body: response.body ? response.json() : undefined,
      headers: response.headers,
    };
  };
}

/** The events of a type this caller can see, oldest first. */
export async function eventsOf(call: Call, type: string): Promise<any[]> {
  const { body } = await call('GET', `/events?type=${encodeURIComponent(type)}&limit=200`);
  return [...body.data].reverse();
}
