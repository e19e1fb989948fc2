// What this server offers, read once from its OpenAPI schema: pages whose API a later
// release adds (memory profiles, members, search modes) appear when the routes do,
// instead of offering buttons that would answer 404.
import { url } from "./api";

interface Schema {
  enum?: string[];
  anyOf?: Schema[];
}

interface Operation {
  parameters?: { name: string; in: string; schema?: Schema }[];
}
type Paths = Record<string, Record<string, Operation>>;

export class Capabilities {
  constructor(private readonly paths: Paths) {}

  has(path: string, method = "get"): boolean {
    return Boolean(this.paths[path]?.[method]);
  }

  /** The values a query parameter may take ([] when the route has no such parameter). */
  parameter(path: string, name: string, method = "get"): { present: boolean; values: string[] } {
    const param = this.paths[path]?.[method]?.parameters?.find((p) => p.name === name);
    // An optional parameter's enum sits in anyOf (FastAPI: Literal[...] | None).
    const schema = param?.schema;
    const values = schema?.enum ?? schema?.anyOf?.find((s) => s.enum)?.enum ?? [];
    return { present: Boolean(param), values };
  }
}

let loaded: Promise<Capabilities> | null = null;

export function capabilities(): Promise<Capabilities> {
  loaded ??= fetch(url("/openapi.json"), { credentials: "same-origin" })
    .then((r) => (r.ok ? r.json() : { paths: {} }))
    .then((schema: { paths?: Paths }) => new Capabilities(schema.paths ?? {}))
    .catch(() => new Capabilities({}));
  return loaded;
}
