// What the Lambda bundles import for `ajv-formats`: nothing (see ../ajv/README.md).
export default function addFormats(ajv) {
  return ajv;
}
