import { v7 } from 'uuid';

/** Time-ordered ids (UUIDv7): good index locality, and id order is creation order. */
export function newId(): string {
  return v7();
}

export function newEventId(): string {
  return `evt_${v7()}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
