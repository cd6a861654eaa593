import { handle } from 'hono/aws-lambda';
import { createApiDocsApp } from './app';
import document from './public-openapi.json';

export const handler = handle(createApiDocsApp(() => document));
