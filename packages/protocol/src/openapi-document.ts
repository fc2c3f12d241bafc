/** The frame every Palisade OpenAPI 3.1 document shares (openapi.ts, openapi-control.ts). */
export function openApiDocument(d: {
  title: string;
  description: string;
  serverUrl?: string | undefined;
  securitySchemes: Record<string, unknown>;
  schemas: Record<string, unknown>;
  paths: Record<string, unknown>;
}): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: d.title, version: '1', description: d.description },
    ...(d.serverUrl ? { servers: [{ url: d.serverUrl }] } : {}),
    components: { securitySchemes: d.securitySchemes, schemas: d.schemas },
    paths: d.paths,
  };
}
