import { lazy, type ComponentType } from 'react';

/** A page whose code loads when it is first opened (or `preload`ed); once loaded it renders at once. */
export interface LazyPage<P> {
  (props: P): React.ReactNode;
  preload(): Promise<void>;
}

/**
 * Each page is its own chunk, so the first page a reader opens starts from a main chunk of React, the router,
 * the query cache and the client, not from every page's code. `preload` before the first render matters: a
 * page that suspends shows its fallback, and React then holds the page back until 300 ms after that fallback
 * appeared (its throttle of Suspense reveals), which would land on every first look.
 */
export function lazyPage<P extends object>(
  load: () => Promise<Record<string, unknown>>,
  name: string,
): LazyPage<P> {
  let loaded: ComponentType<P> | undefined;
  const loading = () =>
    load().then((m) => {
      loaded = m[name] as ComponentType<P>;
      return { default: loaded };
    });
  const Lazy = lazy(loading);
  const Page = (props: P) => {
    const Loaded = loaded;
    return Loaded ? <Loaded {...props} /> : <Lazy {...props} />;
  };
  Page.preload = () => loading().then(() => undefined);
  return Page;
}
