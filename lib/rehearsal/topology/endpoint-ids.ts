/** A proxy's default endpoint has no resource of its own in either flavour: it is named after its proxy. */
export function defaultEndpointId(proxyId: string): string {
  return `${proxyId}#default`;
}
