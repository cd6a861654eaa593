/** The credential of an `Authorization: Bearer <credential>` header, if that is what it holds. */
export const bearerOf = (header: string | undefined): string | undefined => /^Bearer\s+(\S+)$/i.exec(header ?? '')?.[1];
