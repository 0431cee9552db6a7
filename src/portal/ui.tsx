import type { ComponentChildren } from 'preact';
import type { PortalContext } from './context.ts';

/** The state of a form: what the user typed, and the errors next to its fields. */
export interface FormState {
  values: Record<string, string | string[] | undefined>;
  errors: Record<string, string>;
  /** An error that belongs to no one field (a stale form, a conflict). */
  formError?: string;
}

export const emptyForm: FormState = { values: {}, errors: {} };

export function value(form: FormState, name: string): string {
  const given = form.values[name];
  return typeof given === 'string' ? given : '';
}

export function PageHead(props: {
  title: string;
  sub?: ComponentChildren;
  crumbs?: ComponentChildren;
  children?: ComponentChildren;
}) {
  return (
    <div class="page-head">
      <div>
        {props.crumbs && <div class="crumbs">{props.crumbs}</div>}
        <h1>{props.title}</h1>
        {props.sub && <p class="sub">{props.sub}</p>}
      </div>
      {props.children && <div>{props.children}</div>}
    </div>
  );
}

export function Panel(props: {
  title?: string;
  actions?: ComponentChildren;
  /** Fetched again every this many ms and swapped in place (needs `id`). */
  refreshMs?: number;
  id?: string;
  children: ComponentChildren;
}) {
  return (
    <section class="panel" aria-label={props.title} id={props.id} data-refresh={props.refreshMs}>
      {(props.title || props.actions) && (
        <div class="panel-head">
          {props.title && <h2>{props.title}</h2>}
          {props.actions}
        </div>
      )}
      {props.children}
    </section>
  );
}

export function Stat(props: { label: string; value: ComponentChildren; hint?: string; href?: string }) {
  return (
    <div class="stat">
      <div class="label">{props.label}</div>
      <div class="value">{props.href ? <a href={props.href}>{props.value}</a> : props.value}</div>
      {props.hint && <div class="hint">{props.hint}</div>}
    </div>
  );
}

export function Empty(props: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <strong>{props.title}</strong>
      {props.children}
    </div>
  );
}

export function Notice(props: { kind: 'ok' | 'bad' | 'info'; children: ComponentChildren }) {
  return (
    <div class={`notice ${props.kind}`} role={props.kind === 'bad' ? 'alert' : 'status'}>
      {props.children}
    </div>
  );
}

export function Badge(props: { kind?: 'ok' | 'warn' | 'bad' | 'brand'; children: ComponentChildren }) {
  return <span class={props.kind ? `badge ${props.kind}` : 'badge'}>{props.children}</span>;
}

/** A table with headings; `empty` stands in for it when there are no rows. */
export function Table(props: {
  label: string;
  head: (string | { label: string; num?: boolean; hidden?: boolean })[];
  rows: ComponentChildren[];
  empty: ComponentChildren;
}) {
  if (props.rows.length === 0) return <>{props.empty}</>;
  return (
    <div class="table-wrap">
      <table aria-label={props.label}>
        <thead>
          <tr>
            {props.head.map((cell) => {
              const column = typeof cell === 'string' ? { label: cell } : cell;
              return (
                <th scope="col" class={column.num ? 'num' : undefined}>
                  {column.hidden ? <span class="sr-only">{column.label}</span> : column.label}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>{props.rows}</tbody>
      </table>
    </div>
  );
}

/** A date as the portal shows it: UTC, to the minute, with the exact instant on hover. */
export function When(props: { at: Date | string | null | undefined; never?: string }) {
  if (!props.at) return <span class="muted">{props.never ?? '—'}</span>;
  const at = props.at instanceof Date ? props.at : new Date(props.at);
  const iso = at.toISOString();
  return <time datetime={iso}>{`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`}</time>;
}

/** A form that changes something: POST with the page's CSRF token. */
export function PostForm(props: {
  ctx: PortalContext;
  action: string;
  class?: string;
  confirm?: string;
  label?: string;
  children: ComponentChildren;
}) {
  return (
    <form
      method="post"
      action={props.action}
      class={props.class}
      data-confirm={props.confirm}
      aria-label={props.label}
    >
      <input type="hidden" name="_csrf" value={props.ctx.csrf} />
      {props.children}
    </form>
  );
}

/** A one-button form: revoke, retry, enable. */
export function ActionButton(props: {
  ctx: PortalContext;
  action: string;
  label: string;
  confirm?: string;
  kind?: 'danger' | 'secondary';
  small?: boolean;
  hidden?: Record<string, string>;
}) {
  const classes = [props.kind, props.small ? 'small' : undefined].filter(Boolean).join(' ');
  return (
    <PostForm ctx={props.ctx} action={props.action} confirm={props.confirm}>
      {Object.entries(props.hidden ?? {}).map(([name, given]) => (
        <input type="hidden" name={name} value={given} />
      ))}
      <button type="submit" class={classes || undefined}>
        {props.label}
      </button>
    </PostForm>
  );
}

/** A labelled input with its help and its error, keeping what the user typed. */
export function Field(props: {
  form: FormState;
  name: string;
  label: string;
  type?: 'text' | 'email' | 'password' | 'url' | 'number' | 'date' | 'datetime-local' | 'search';
  help?: string;
  required?: boolean;
  autocomplete?: string;
  placeholder?: string;
  min?: number;
}) {
  const id = `field-${props.name}`;
  const error = props.form.errors[props.name];
  const describedBy = [props.help ? `${id}-help` : null, error ? `${id}-error` : null].filter(Boolean);
  // A password is never sent back into the page.
  const common = {
    id,
    name: props.name,
    required: props.required,
    autocomplete: props.autocomplete,
    placeholder: props.placeholder,
    'aria-invalid': error ? ('true' as const) : undefined,
    'aria-describedby': describedBy.length ? describedBy.join(' ') : undefined,
  };
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.type === 'password' ? (
        <input {...common} type="password" />
      ) : (
        <input
          {...common}
          type={(props.type ?? 'text') as 'text'}
          value={value(props.form, props.name)}
          min={props.min}
        />
      )}
      {props.help && (
        <span class="help" id={`${id}-help`}>
          {props.help}
        </span>
      )}
      {error && (
        <span class="error" id={`${id}-error`}>
          {error}
        </span>
      )}
    </div>
  );
}

export function SelectField(props: {
  form: FormState;
  name: string;
  label: string;
  options: { value: string; label: string }[];
  help?: string;
}) {
  const id = `field-${props.name}`;
  const error = props.form.errors[props.name];
  const chosen = value(props.form, props.name);
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select
        id={id}
        name={props.name}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
      >
        {props.options.map((option) => (
          <option value={option.value} selected={option.value === chosen}>
            {option.label}
          </option>
        ))}
      </select>
      {props.help && <span class="help">{props.help}</span>}
      {error && (
        <span class="error" id={`${id}-error`}>
          {error}
        </span>
      )}
    </div>
  );
}

export function FormError(props: { form: FormState }) {
  return props.form.formError ? <Notice kind="bad">{props.form.formError}</Notice> : null;
}

/** A key, secret or link shown once, with a copy button (the script reveals it). */
export function OnceShown(props: {
  title: string;
  id: string;
  secret: string;
  children?: ComponentChildren;
}) {
  return (
    <section class="secret" aria-label={props.title}>
      <h2>{props.title}</h2>
      <div class="value">
        <output id={props.id}>{props.secret}</output>
        <button type="button" data-copy={props.id} hidden>
          Copy
        </button>
      </div>
      <p>
        <strong>Copy it now: it will not be shown again.</strong> {props.children}
      </p>
    </section>
  );
}

/** "Next page" of a keyset-paged list, keeping the page's filters. */
export function Pager(props: {
  path: string;
  next: string | null;
  query?: Record<string, string | undefined>;
}) {
  if (!props.next) return null;
  const params = new URLSearchParams();
  for (const [name, given] of Object.entries(props.query ?? {})) if (given) params.set(name, given);
  params.set('after', props.next);
  return (
    <nav class="pager" aria-label="Pages">
      <a class="button secondary small" href={`${props.path}?${params}`}>
        Next page
      </a>
    </nav>
  );
}
