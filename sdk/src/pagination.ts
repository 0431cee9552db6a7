/** What a list operation answers: `{data, next_page_token, limit, total?}`. */
export interface ListEnvelope<Item> {
  data: Item[];
  next_page_token: string | null;
}

/**
 * One page of a list, with the envelope's fields (`data`, `next_page_token`, `limit`, `total`), and an
 * async iterable over every item of this page and of every page after it.
 */
export type Page<Item, Envelope> = Envelope & PageMethods<Item, Envelope>;

export interface PageMethods<Item, Envelope> extends AsyncIterable<Item> {
  hasNextPage(): boolean;
  /** The next page; call it only when `hasNextPage()`. */
  getNextPage(): Promise<Page<Item, Envelope>>;
}

type FetchPage<Envelope> = (pageToken: string | null) => Promise<Envelope>;

function makePage<Item, Envelope extends ListEnvelope<Item>>(
  envelope: Envelope,
  fetchPage: FetchPage<Envelope>,
): Page<Item, Envelope> {
  const methods: PageMethods<Item, Envelope> = {
    hasNextPage: () => Boolean(envelope.next_page_token),
    getNextPage: async () => {
      if (!envelope.next_page_token) throw new Error('This is the last page: check hasNextPage() first');
      return makePage(await fetchPage(envelope.next_page_token), fetchPage);
    },
    async *[Symbol.asyncIterator]() {
      let page: Page<Item, Envelope> = this as Page<Item, Envelope>;
      for (;;) {
        yield* page.data;
        if (!page.hasNextPage()) return;
        page = await page.getNextPage();
      }
    },
  };
  return Object.assign(Object.create(methods) as PageMethods<Item, Envelope>, envelope);
}

/**
 * What a list method returns: a promise of the first page, and an async iterable over every item of
 * every page (`for await (const contact of client.crm.contacts.list())`). Nothing is sent until it is
 * awaited or iterated.
 */
export class PagePromise<Item, Envelope> implements PromiseLike<Page<Item, Envelope>>, AsyncIterable<Item> {
  #first: Promise<Page<Item, Envelope>> | null = null;
  readonly #fetchPage: FetchPage<Envelope>;

  constructor(fetchPage: FetchPage<Envelope>) {
    this.#fetchPage = fetchPage;
  }

  #page(): Promise<Page<Item, Envelope>> {
    this.#first ??= this.#fetchPage(null).then((envelope) =>
      makePage<Item, Envelope & ListEnvelope<Item>>(
        envelope as Envelope & ListEnvelope<Item>,
        this.#fetchPage as FetchPage<Envelope & ListEnvelope<Item>>,
      ),
    );
    return this.#first;
  }

  // biome-ignore lint/suspicious/noThenProperty: a list call is a promise of its first page, by design
  then<A = Page<Item, Envelope>, B = never>(
    onFulfilled?: ((page: Page<Item, Envelope>) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#page().then(onFulfilled, onRejected);
  }

  catch<B = never>(
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<Page<Item, Envelope> | B> {
    return this.#page().catch(onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<Page<Item, Envelope>> {
    return this.#page().finally(onFinally);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Item> {
    yield* await this.#page();
  }
}
