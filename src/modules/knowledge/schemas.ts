import { Type } from '@sinclair/typebox';
import { pageQuerySchema } from '../../platform/http/pagination.ts';
import {
  Body,
  Metadata,
  MetadataOut,
  Nullable,
  Query,
  Timestamp,
  Uuid,
} from '../../platform/http/schemas.ts';
import { MAX_CONTENT_CHARACTERS } from './service.ts';

export const KnowledgeBaseSchema = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    description: Nullable(Type.String()),
    document_count: Type.Integer({ description: 'Documents in the base, deleted ones left out.' }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { description: 'A knowledge base: documents ingested for search.' },
);

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
const Description = Nullable(Type.String({ maxLength: 4000 }));

export const CreateKnowledgeBaseBody = Body({ name: Name, description: Type.Optional(Description) });
export const UpdateKnowledgeBaseBody = Body({
  name: Type.Optional(Name),
  description: Type.Optional(Description),
});

const Status = Type.Union(
  [Type.Literal('pending'), Type.Literal('processing'), Type.Literal('ready'), Type.Literal('failed')],
  { description: 'pending, then processing, then ready or failed (with error).' },
);
const SourceType = Type.Union([Type.Literal('manual'), Type.Literal('url'), Type.Literal('upload')]);

export const DocumentSchema = Type.Object(
  {
    id: Uuid(),
    kb_id: Uuid(),
    title: Type.String(),
    source_type: SourceType,
    source_url: Nullable(Type.String()),
    storage_path: Nullable(Type.String()),
    mime_type: Nullable(Type.String()),
    byte_size: Nullable(Type.Integer()),
    metadata: MetadataOut(),
    status: Status,
    error: Nullable(
      Type.String({ description: 'Why the last attempt failed (set on failed, and on a pending retry).' }),
    ),
    chunk_count: Type.Integer(),
    character_count: Type.Integer({ description: 'Characters of text extracted.' }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    ingested_at: Nullable(Timestamp()),
    deleted_at: Nullable(Timestamp()),
  },
  { description: 'A knowledge-base document and its ingestion status.' },
);

export const CreateDocumentBody = Body({
  title: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }),
  source_type: SourceType,
  content: Type.Optional(
    Type.String({
      maxLength: MAX_CONTENT_CHARACTERS,
      description: 'manual: the text, up to 200,000 characters.',
    }),
  ),
  source_url: Type.Optional(
    Type.String({ minLength: 1, maxLength: 2048, description: 'url: an absolute http(s) URL to fetch.' }),
  ),
  storage_path: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'upload: the storage_path of POST /kb/{id}/uploads.',
    }),
  ),
  mime_type: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'text/plain, text/markdown, text/html or application/pdf; required for upload.',
    }),
  ),
  byte_size: Type.Optional(Type.Integer({ minimum: 0 })),
  metadata: Type.Optional(Metadata('its ingestion events: ai.kb_ingest.completed and ai.job.failed')),
});

export const ListKnowledgeBasesQuery = Query({ ...pageQuerySchema });
export const ListDocumentsQuery = Query({ ...pageQuerySchema, status: Type.Optional(Status) });

export const KbParams = Type.Object({ id: Uuid() }, { additionalProperties: false });
export const DocumentParams = Type.Object({ id: Uuid(), docId: Uuid() }, { additionalProperties: false });

export const CreateUploadBody = Body({
  filename: Type.String({ minLength: 1, maxLength: 255 }),
  mime_type: Type.String({ minLength: 1, maxLength: 255 }),
  byte_size: Type.Integer({ minimum: 1 }),
});

export const UploadSchema = Type.Object({
  url: Type.String({ description: 'PUT the bytes here, before expires_at.' }),
  method: Type.Literal('PUT'),
  headers: Type.Record(Type.String(), Type.String(), { description: 'Headers the PUT must carry as given.' }),
  storage_path: Type.String({ description: 'Create the document with this storage_path once uploaded.' }),
  expires_at: Timestamp(),
});

export const SearchQuery = Query({
  q: Type.String({ minLength: 1, maxLength: 500, description: 'Words, "phrases", -exclusions and or.' }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
});

export const SearchHitSchema = Type.Object({
  document_id: Uuid(),
  title: Type.String(),
  chunk_index: Type.Integer(),
  snippet: Type.String(),
  score: Type.Number(),
});
