import type { TSchema } from 'typebox';
import { IdempotencyHeaders, keyedErrorResponses } from '../schemas/common.ts';

/**
 * The parts every keyed route's schema shares, so each route states only its own summary,
 * description, params, body and answer. They feed validation and the OpenAPI document alike.
 */

/** A route called with a bearer API key, listed under `tag`. */
export function keyedRoute(tag: string) {
  return { tags: [tag], security: [{ bearerAuth: [] }] };
}

/** A keyed POST that accepts an Idempotency-Key header (or the body's idempotency_key). */
export function idempotentPost(tag: string) {
  return { ...keyedRoute(tag), headers: IdempotencyHeaders };
}

/** 200 with `object`, or one of the errors every keyed route can give. */
export function answers<T extends TSchema>(object: T) {
  return { 200: object, ...keyedErrorResponses };
}

/** A create: 201 with `object` the first time, 200 with it on a replay, or an error. */
export function createdAnswers<T extends TSchema>(object: T) {
  return { 200: object, 201: object, ...keyedErrorResponses };
}

/** The part of a reply an idempotent answer sets (methods, so any route's typed reply fits). */
interface IdempotentReply {
  header(key: string, value: string): unknown;
  code(statusCode: number): unknown;
}

/** Marks a replayed answer with `Idempotent-Replayed: true`. */
export function replyReplayed(reply: IdempotentReply, result: { replayed: boolean }): void {
  if (result.replayed) reply.header('Idempotent-Replayed', 'true');
}

/** A create's answer: 201 the first time; a replay is 200 with `Idempotent-Replayed: true`. */
export function replyCreated(reply: IdempotentReply, result: { replayed: boolean }): void {
  replyReplayed(reply, result);
  reply.code(result.replayed ? 200 : 201);
}
