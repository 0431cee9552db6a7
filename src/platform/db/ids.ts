import { v7 } from 'uuid';

/** Time-ordered ids (UUIDv7): good index locality, and id order is creation order. */
export function newId(): string {
  return v7();
}

export function newEventId(): string {
  return `evt_${v7()}`;
}

/** The smallest UUIDv7 of an instant: `id >= firstIdAt(t)` selects rows created from t on, by the id index. */
export function firstIdAt(at: Date): string {
  const hex = at.getTime().toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
