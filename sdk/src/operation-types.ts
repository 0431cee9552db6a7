import type { operations } from './generated/openapi.js';

/** The operationIds of the API (`crm.contacts.list`, ...). */
export type OperationId = keyof operations;

/** The query parameters of an operation. */
export type Query<K extends OperationId> = operations[K] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never;

/** The JSON body of an operation. */
export type Body<K extends OperationId> = operations[K] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

type SuccessStatus = 200 | 201 | 202;

/** The JSON body of an operation's success responses (the union when it has several, as 200 and 201). */
export type Success<K extends OperationId> = {
  [S in keyof operations[K]['responses']]: S extends SuccessStatus
    ? operations[K]['responses'][S] extends { content: { 'application/json': infer R } }
      ? R
      : never
    : never;
}[keyof operations[K]['responses']];

/** The item of a list operation's page. */
export type PageItem<K extends OperationId> = Success<K> extends { data: readonly (infer I)[] } ? I : never;
