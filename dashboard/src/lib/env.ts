// Where the app is: the server writes these into the page (meta tags, never script), so
// one build runs at / and under an API Gateway stage such as /prod/.

function meta(name: string): string | null {
  const el = document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`);
  return el ? el.content : null;
}

/** The REST API's root, ending in "/": "/" locally, "/prod/" behind a stage. */
export const apiRoot: string = meta("memvault-root") ?? "/";
/** The dashboard's own root, ending in "/" (what client routes are relative to). */
export const appRoot: string = new URL(document.baseURI).pathname.replace(/[^/]*$/, "");
/** The nonce the page's CSP allows for styles built at run time (the editor's theme). */
export const styleNonce: string | undefined = meta("memvault-style-nonce") ?? undefined;
