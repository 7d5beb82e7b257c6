/** A page of a cursor list, as every list of the service answers. */
interface CursorPage {
  data?: unknown[];
  nextCursor?: string | null;
  hasMore?: boolean;
}

/**
 * What a list method returns: `await` it for the first page, or iterate it (`for await`) for every
 * record across pages, following `nextCursor` with the same query until `hasMore` is false.
 */
export class PagePromise<Page, Item> implements PromiseLike<Page>, AsyncIterable<Item> {
  #first: Promise<Page> | undefined;

  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<Page>) {}

  #firstPage(): Promise<Page> {
    return (this.#first ??= this.fetchPage(undefined));
  }

  then<A = Page, B = never>(
    onFulfilled?: ((page: Page) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#firstPage().then(onFulfilled, onRejected);
  }

  /** Every page, the first one included. */
  async *pages(): AsyncGenerator<Page> {
    let page = await this.#firstPage();
    for (;;) {
      yield page;
      const { nextCursor, hasMore } = page as CursorPage;
      if (!hasMore || !nextCursor) return;
      page = await this.fetchPage(nextCursor);
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item> {
    for await (const page of this.pages()) {
      for (const item of (page as CursorPage).data ?? []) yield item as Item;
    }
  }
}
