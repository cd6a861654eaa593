/**
 * Knowledge sources: their definitions, files and uploads, connecting, ingestion (the queue's
 * worker), compaction and search. Everything else in this folder is private.
 */
export { requestCompaction } from './compaction';
export { connectSource, type ConnectRequest, type SourceLink } from './connect';
export { documentAccessShown, setDocumentAccess } from './document-access';
export { type FileBytes } from './file-contents';
export { completeUpload, createUpload } from './file-uploads';
export { handleIngestionMessage, setStatus } from './ingestion';
export { compactionAccepted, connectInput, documentAccessInput, filePath, filesUpload, type FilesUpload, knowledgeSource, knowledgeSourceInput, searchInput, searchResponse, sourceLocation, uploadInput, uploadTicket } from './source-schema';
export { addFiles, createKnowledgeSource, deleteKnowledgeSource, filesOf, isReady, type KnowledgeSourceRecord, knowledgeSources, presentSource, publicSource, removeFile, replaceKnowledgeSource, searchKnowledgeSource, startSync } from './sources';
