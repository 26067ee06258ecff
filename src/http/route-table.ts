/** Remembers every route's path pattern so an unknown method on a known path answers 405, not 404. */
export class RouteTable {
  private readonly routes: { pattern: RegExp; method: string }[] = [];

  add(url: string, methods: string | string[]): void {
    const source = url
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    for (const method of [methods].flat()) {
      if (method !== 'HEAD') this.routes.push({ pattern: new RegExp(`^${source}/?$`), method });
    }
  }

  methodsFor(path: string): string[] {
    return [...new Set(this.routes.filter((r) => r.pattern.test(path)).map((r) => r.method))];
  }
}
