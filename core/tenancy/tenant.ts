/** A tenant as configured: the union of SVC_APP_TOKENS and SVC_APP_DIDS. */
export interface Tenant {
  appId: string;
  /** Service token (>= 32 chars). A tenant without one cannot call the API. */
  token?: string;
  /** App DID (did:web), under which its posts are authored. */
  did?: string;
}

/** A caller's tenant once its service token matched and custody of its DID is proven: the DID is known. */
export interface ProvenTenant extends Tenant {
  did: string;
}
