// Generated from openapi.yaml by `npm run client` (client/scripts/generate.ts): do not edit.
export interface paths {
    "/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Liveness: the process answers
         * @description Touches no store. Needs no token.
         */
        get: operations["liveness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/health/ready": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Readiness: the service and its store answer
         * @description Answers 503 when the store does not answer within 1000 ms, or while the service shuts down. Needs no token.
         */
        get: operations["readiness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics
         * @description Request counts and latency by route and status, store operation latency, group-commit batch sizes, process metrics.
         */
        get: operations["metrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/plants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List plants
         * @description Plants in ascending id order, one page at a time: at most `limit` plants, and fewer when their names and tags pass about 2 MiB. When more remain, the `Link` header holds the next page's address; following it from the first page visits every plant exactly once.
         */
        get: operations["listPlants"];
        put?: never;
        /**
         * Add a plant
         * @description Creates a plant in the store. Sending a plant whose id is already stored with the same name and tag is a safe retry and answers 200 again; with a different name or tag it answers 409.
         */
        post: operations["addPlant"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/plants/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a plant by id
         * @description The answer carries the plant's `ETag`; a request whose `If-None-Match` names it (compared weakly), or is `*`, answers 304 without a body while the plant is unchanged.
         */
        get: operations["getPlant"];
        /**
         * Replace a plant's name and tag
         * @description Replaces the name and tag of the plant with this id (no tag removes it); the id stays. With `If-Match`, only while the plant is still the one read (optimistic concurrency), and with `If-None-Match`, only while it has none of the tags named: else a 412 and nothing written. An update that changes nothing writes and announces nothing, and answers 200 as one that does. Like a create, the 200 is sent once the change is on disk.
         */
        put: operations["updatePlant"];
        post?: never;
        /**
         * Delete a plant by id
         * @description Deletes the plant; its id can then be created again. With `If-Match`, only while the plant is still the one read: else a 412 and nothing deleted (a stale delete never undoes another client's update).
         */
        delete: operations["deletePlant"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/plants/changes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Follow every change to the plants
         * @description The events of every change (`plant.created`, `plant.updated`, `plant.deleted`) in the order they committed, from the same records as webhooks, each with the same body. Page with `after` (each page's `next`): following it visits every event exactly once, on every instance. A page holds at most `limit` events, and stops before it passes 2 MiB. With `wait`, an empty page waits up to 30 s for an event (a long poll). With `Accept: text/event-stream`, the answer is a stream of Server-Sent Events instead: each event's `id` is its `seq`, `event` its type and `data` the Change; a comment every 15 s keeps it open, and it ends after 300 s (an EventSource reconnects, and `Last-Event-ID` resumes after the last event received). Events are kept at least 7 days: a cursor before those pruned answers 410, and the consumer reads the plants again. Waiting and streaming requests are bounded per token (CHANGES_MAX_READERS_PER_TOKEN) and in all (CHANGES_MAX_READERS).
         */
        get: operations["listChanges"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the webhook subscriptions
         * @description Every subscription, oldest first, without secrets.
         */
        get: operations["listSubscriptions"];
        put?: never;
        /**
         * Subscribe to new plants
         * @description Every plant created from now on is POSTed to the URL as a `NewPlant`, signed as Standard Webhooks specifies with the `secret` of this answer, which is shown here only (see the `plant.created` webhook). At most 20 subscriptions exist at a time. With an `Idempotency-Key`, a retry of the same request within 24 hours answers as the first did, secret included, and subscribes nothing more.
         */
        post: operations["subscribe"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a webhook subscription */
        get: operations["getSubscription"];
        put?: never;
        post?: never;
        /**
         * Delete a webhook subscription
         * @description Stops its deliveries: those pending are dropped with its delivery log.
         */
        delete: operations["unsubscribe"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a subscription's deliveries
         * @description The delivery log, newest first, one page at a time. When more remain, the `Link` header holds the next page's address. Delivered and failed deliveries are kept for 7 days.
         */
        get: operations["listDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/deliveries/{deliveryId}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start a delivery over
         * @description A failed (or delivered) delivery becomes pending again with no attempts made, due now, under the same `webhook-id`. A deleted plant's delivery is not: its data is no longer kept (`409 plant_deleted`). It takes no body: one sent anyway must be JSON, and is ignored.
         */
        post: operations["retryDelivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/enable": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Enable a disabled subscription, replaying what it missed
         * @description A subscription disabled because its pending deliveries reached WEBHOOK_MAX_PENDING becomes active again: new plants are announced to it, and the plants it missed while disabled (those created within the last 7 days and not deleted since) are queued for it in the background, oldest first, in chunks of 1,000 as its pending deliveries leave room. An active subscription is left as it is. It takes no body: one sent anyway must be JSON, and is ignored.
         */
        post: operations["enableSubscription"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "/plant/webhook": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A plant was added
         * @description Sent to each subscription with `plant.created` among its events once a created plant is committed, at least once: a receiver deduplicates by `webhook-id`. The body is the NewPlant, without a `type` field (as before subscriptions chose their events). Verify `webhook-signature` with the subscription's secret (the `standardwebhooks` package does it), and read the id from the raw body: it is an exact int64, beyond what a JSON number parsed to a double holds. Any 2xx within WEBHOOK_TIMEOUT_MS acknowledges; anything else (a redirect included: redirects are not followed) is retried with exponential backoff and full jitter, up to WEBHOOK_MAX_ATTEMPTS. A subscription gets the events of one plant in the order they happened: one is not attempted while an earlier one of the same plant is pending.
         */
        post: operations["plantWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/plant/updated": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A plant's name or tag changed
         * @description Sent to each subscription with `plant.updated` among its events once an update that changed the plant is committed, at least once. `old` and `new` are the plant before and after. Verify `webhook-signature` with the subscription's secret (the `standardwebhooks` package does it), and read the id from the raw body: it is an exact int64, beyond what a JSON number parsed to a double holds. Any 2xx within WEBHOOK_TIMEOUT_MS acknowledges; anything else (a redirect included: redirects are not followed) is retried with exponential backoff and full jitter, up to WEBHOOK_MAX_ATTEMPTS. A subscription gets the events of one plant in the order they happened: one is not attempted while an earlier one of the same plant is pending.
         */
        post: operations["plantUpdatedWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/plant/deleted": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A plant was deleted
         * @description Sent to each subscription with `plant.deleted` among its events once a delete is committed, at least once, with the name and tag the plant had. The plant's earlier events still pending for any subscription are failed (`plant deleted`) and not sent: their data is erased with the plant. Verify `webhook-signature` with the subscription's secret (the `standardwebhooks` package does it), and read the id from the raw body: it is an exact int64, beyond what a JSON number parsed to a double holds. Any 2xx within WEBHOOK_TIMEOUT_MS acknowledges; anything else (a redirect included: redirects are not followed) is retried with exponential backoff and full jitter, up to WEBHOOK_MAX_ATTEMPTS. A subscription gets the events of one plant in the order they happened: one is not attempted while an earlier one of the same plant is pending.
         */
        post: operations["plantDeletedWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /**
         * @description A plant as the store answers its creation: never its id.
         * @example {
         *       "name": "Monstera",
         *       "tag": "tropical"
         *     }
         */
        Plant: {
            /** @description The name of the plant */
            name: string;
            /** @description Tag that specifies the type of the plant */
            tag?: string;
        };
        /**
         * @description A plant to add. Fields other than id, name and tag are ignored.
         * @example {
         *       "id": 1,
         *       "name": "Monstera",
         *       "tag": "tropical"
         *     }
         */
        NewPlant: {
            /**
             * Format: int64
             * @description Identification number of the plant, any signed 64-bit integer
             * @example 1
             */
            id: bigint;
            /** @description The name of the plant */
            name: string;
            /** @description Tag that specifies the type of the plant */
            tag?: string;
        };
        /**
         * @description A plant's new name and tag, replacing both: no tag removes the tag. Fields other than name and tag are ignored, an id among them: the path names the plant.
         * @example {
         *       "name": "Monstera deliciosa",
         *       "tag": "tropical"
         *     }
         */
        PlantUpdate: {
            /** @description The name of the plant */
            name: string;
            /** @description Tag that specifies the type of the plant */
            tag?: string;
        };
        /**
         * @description A plant as the store holds it: the Plant fields and its id, written as an exact JSON integer.
         * @example {
         *       "id": 1,
         *       "name": "Monstera",
         *       "tag": "tropical"
         *     }
         * @example {
         *       "id": 7,
         *       "name": "Calathea",
         *       "tag": "tropical"
         *     }
         */
        StoredPlant: {
            /**
             * Format: int64
             * @description Identification number of the plant, any signed 64-bit integer
             * @example 1
             */
            id: bigint;
            /** @description The name of the plant */
            name: string;
            /** @description Tag that specifies the type of the plant */
            tag?: string;
        };
        /** @description The body of every error response */
        Error: {
            /**
             * Format: int32
             * @description The HTTP status code of the response
             */
            error: number;
            /** @description What went wrong, in words a client developer can act on */
            message: string;
            /**
             * @description The cause, stable across versions: branch on this, not on the message.
             *
             *     - `invalid_request` (400): The request is not valid HTTP (the connection is then closed), or its framing is not (a Content-Length that does not match the body). An HTTP/1.1 request without `Host` gets a 400 from Node itself, with no body.
             *     - `invalid_path` (400): The path is not valid percent-encoding, or a path parameter is longer than 100 characters.
             *     - `invalid_json` (400): The body is not valid JSON, or JSON the service refuses: a key twice in one object, a lone UTF-16 surrogate, a `__proto__` key, nesting too deep, or a fraction that would be read as an integer.
             *     - `invalid_body` (400): The body is JSON, but not the shape the operation takes: a field missing, of the wrong type, too long, or an id outside int64. `details` names each field.
             *     - `invalid_parameter` (400): A path or query parameter is not valid. `details` names each parameter.
             *     - `unknown_parameter` (400): A query parameter the operation does not take (a misspelt or unsupported one would otherwise be ignored silently). `details` names each.
             *     - `plant_rejected` (400): The store cannot keep this plant.
             *     - `webhook_url_refused` (400): The webhook URL is not one the service delivers to: not https, port 0, or a host that does not resolve or is not a public address. The message says which, never the addresses a name resolves to.
             *     - `token_missing` (401): No `Authorization` header, or an empty one.
             *     - `authorization_malformed` (401): The `Authorization` header is not `Bearer <token>`: no scheme, another scheme, or no token. Not counted as a guess.
             *     - `token_invalid` (401): The bearer token is not one the service accepts.
             *     - `token_expired` (401): The bearer token has expired.
             *     - `insufficient_scope` (403): The bearer token is valid but lacks the scope this operation needs.
             *     - `route_not_found` (404): No route has this path.
             *     - `plant_not_found` (404): No plant has this id.
             *     - `webhook_not_found` (404): No webhook subscription has this id.
             *     - `delivery_not_found` (404): The subscription has no delivery with this id.
             *     - `method_not_allowed` (405): The path exists, but not with this method; `Allow` lists the methods it has.
             *     - `request_timeout` (408): The request did not arrive within the time limit. The connection is closed.
             *     - `plant_conflict` (409): A plant with this id already exists with a different name or tag.
             *     - `subscription_limit` (409): The store already keeps as many webhook subscriptions as it may.
             *     - `delivery_pending` (409): The delivery is pending already; it cannot be retried.
             *     - `plant_deleted` (409): The delivery's plant was deleted, and its data with it: there is nothing to send again.
             *     - `precondition_unsupported` (400): A write sent `If-Unmodified-Since` without `If-Match`: plants keep no modification date, so it cannot be evaluated, and the write would otherwise be unconditional. Nothing was written; send `If-Match` with the `ETag` of a read instead.
             *     - `precondition_failed` (412): A write's precondition is false for the plant as it is now: its `If-Match` names no current `ETag` (the plant changed since it was read, or the header names no strong tag), or its `If-None-Match` names the current one or is `*`. On `POST /plants` (the collection, which always exists and has no `ETag`): an `If-Match` other than `*`, or `If-None-Match: *`. Nothing was written; read the plant again.
             *     - `cursor_expired` (410): The change feed no longer holds the events after this cursor: they were pruned (events are kept at least 7 days), the store was moved or restored (its history restarted, and the cursor is from the earlier one), or the cursor is ahead of every event this store issued. Read the plants again from `GET /plants`, then follow the feed after the `latest` of a fresh page.
             *     - `body_too_large` (413): The body is larger than BODY_LIMIT.
             *     - `unsupported_media_type` (415): The body is not `application/json`.
             *     - `rate_limited` (429): More requests a second with this token than RATE_LIMIT_PER_TOKEN; retry after `Retry-After` seconds.
             *     - `too_many_readers` (429): This token already has CHANGES_MAX_READERS_PER_TOKEN change-feed requests waiting or streaming; end one, or retry after `Retry-After` seconds.
             *     - `auth_locked_out` (429): A wrong token from a client address that sent too many this minute (a valid one from it is served); retry after `Retry-After` seconds.
             *     - `headers_too_large` (431): The request headers are larger than the limit. The connection is closed.
             *     - `internal_error` (500): An unexpected error; the details are in the service log, never in the answer.
             *     - `store_unavailable` (503): The store is unavailable (disk full, file locked, database unreachable); nothing was stored. Retry after `Retry-After` seconds.
             *     - `store_busy` (503): Too many requests are waiting for the store (writes beyond the write queue's limit; on PostgreSQL, any request once every pooled connection has been in use for 2 s); nothing was stored. Retry after `Retry-After` seconds.
             *     - `overloaded` (503): The service is overloaded (the event loop lags, the heap is nearly full, too many request bodies are arriving at once: the connection is then closed, or CHANGES_MAX_READERS change-feed requests are waiting or streaming already); retry after `Retry-After` seconds.
             *     - `shutting_down` (503): The service is shutting down; retry, another instance will answer.
             *     - `not_ready` (503): A dependency the service needs (the store) is not available.
             *     - `idempotency_key_invalid` (400): The `Idempotency-Key` is not a Structured Field string of 1 to 256 characters (quoted, or bare of letters, digits and `.-_~:+/=`).
             *     - `idempotency_key_in_use` (409): A request with this `Idempotency-Key` is still running (on this instance or another): retry after `Retry-After` seconds for its answer.
             *     - `subscription_deleted` (410): The subscription this `Idempotency-Key` created was deleted since, and its secret with it: the answer cannot be given again. Subscribe with a new key.
             *     - `idempotency_key_reused` (422): This `Idempotency-Key` was used within the last 24 hours with another body (another `url` or `events`). Nothing was done.
             *     - `idempotency_keys_exhausted` (429): This token has 1000 `Idempotency-Key`s kept already, the most it may: retry after `Retry-After` seconds, when the oldest expires, or send the request without a key.
             * @enum {string}
             */
            code: "invalid_request" | "invalid_path" | "invalid_json" | "invalid_body" | "invalid_parameter" | "unknown_parameter" | "plant_rejected" | "webhook_url_refused" | "token_missing" | "authorization_malformed" | "token_invalid" | "token_expired" | "insufficient_scope" | "route_not_found" | "plant_not_found" | "webhook_not_found" | "delivery_not_found" | "method_not_allowed" | "request_timeout" | "plant_conflict" | "subscription_limit" | "delivery_pending" | "plant_deleted" | "precondition_unsupported" | "precondition_failed" | "cursor_expired" | "body_too_large" | "unsupported_media_type" | "rate_limited" | "too_many_readers" | "auth_locked_out" | "headers_too_large" | "internal_error" | "store_unavailable" | "store_busy" | "overloaded" | "shutting_down" | "not_ready" | "idempotency_key_invalid" | "idempotency_key_in_use" | "subscription_deleted" | "idempotency_key_reused" | "idempotency_keys_exhausted";
            /** @description On a 400 for a body or parameters that are not valid: one entry per problem */
            details?: {
                /** @description Where the problem is: `body` or `body/<field>`, `params/<name>`, `querystring/<name>` */
                field: string;
                /** @description What is wrong with it */
                message: string;
            }[];
        };
        /**
         * @description The service answers, and for readiness, its store too
         * @example {
         *       "status": "ok"
         *     }
         * @example {
         *       "status": "ready"
         *     }
         */
        Health: {
            /** @description `ok` for liveness, `ready` for readiness */
            status: string;
        };
        /**
         * @description A webhook subscription to add. Fields other than url and events are ignored.
         * @example {
         *       "url": "https://example.com/plant-hooks"
         *     }
         */
        NewSubscription: {
            /**
             * Format: uri
             * @description Where each new plant is POSTed: an absolute https URL, at most 2048 characters once normalized, without a user name or password, not on port 0, whose host resolves only to public addresses. http, and private or loopback addresses, only when the service runs with WEBHOOK_ALLOW_PRIVATE.
             * @example https://example.com/plant-hooks
             */
            url: string;
            /**
             * @description The events announced to it, each at most once; `["plant.created"]` when left out
             * @default [
             *       "plant.created"
             *     ]
             * @example [
             *       "plant.created",
             *       "plant.updated",
             *       "plant.deleted"
             *     ]
             */
            events?: ("plant.created" | "plant.updated" | "plant.deleted")[];
        };
        /**
         * @description A webhook subscription, as listed: without its secret.
         * @example {
         *       "id": "wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17",
         *       "url": "https://example.com/plant-hooks",
         *       "events": [
         *         "plant.created"
         *       ],
         *       "createdAt": "2026-11-23T05:45:31.512Z",
         *       "status": "active",
         *       "pendingDeliveries": 0
         *     }
         * @example {
         *       "id": "wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17",
         *       "url": "https://example.com/plant-hooks",
         *       "events": [
         *         "plant.created"
         *       ],
         *       "createdAt": "2026-11-23T05:45:31.512Z",
         *       "status": "disabled",
         *       "pendingDeliveries": 10000,
         *       "disabledAt": "2026-11-24T02:10:09.317Z",
         *       "missedSince": "2026-11-24T02:10:09.317Z"
         *     }
         */
        Subscription: {
            /**
             * @description Identification of the subscription
             * @example wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17
             */
            id: string;
            /**
             * Format: uri
             * @description Where each new plant is POSTed: an absolute https URL, at most 2048 characters once normalized, without a user name or password, not on port 0, whose host resolves only to public addresses. http, and private or loopback addresses, only when the service runs with WEBHOOK_ALLOW_PRIVATE.
             * @example https://example.com/plant-hooks
             */
            url: string;
            /** @description The events announced to it */
            events: ("plant.created" | "plant.updated" | "plant.deleted")[];
            /**
             * Format: date-time
             * @description When the subscription was created
             */
            createdAt: string;
            /** @description `active`: each event it chose is announced to it; `disabled`: its pending deliveries reached WEBHOOK_MAX_PENDING, so new events are not (its pending ones still are). `POST /webhooks/{id}/enable` makes it active again and replays what it missed. */
            status: "active" | "disabled";
            /** @description Its deliveries pending now */
            pendingDeliveries: number;
            /**
             * Format: date-time
             * @description When it was disabled; only while disabled
             */
            disabledAt?: string;
            /**
             * Format: date-time
             * @description While disabled, or while what it missed is being replayed: when the first event it missed happened. Missed events it chose are replayed if within the last 7 days and their plant not deleted since (a plant.deleted is replayed).
             */
            missedSince?: string;
        };
        /**
         * @description A webhook subscription just created, with its secret.
         * @example {
         *       "id": "wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17",
         *       "url": "https://example.com/plant-hooks",
         *       "events": [
         *         "plant.created"
         *       ],
         *       "createdAt": "2026-11-23T05:45:31.512Z",
         *       "status": "active",
         *       "pendingDeliveries": 0,
         *       "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw+nQgnXsPGJk="
         *     }
         */
        CreatedSubscription: {
            /**
             * @description Identification of the subscription
             * @example wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17
             */
            id: string;
            /**
             * Format: uri
             * @description Where each new plant is POSTed: an absolute https URL, at most 2048 characters once normalized, without a user name or password, not on port 0, whose host resolves only to public addresses. http, and private or loopback addresses, only when the service runs with WEBHOOK_ALLOW_PRIVATE.
             * @example https://example.com/plant-hooks
             */
            url: string;
            /** @description The events announced to it */
            events: ("plant.created" | "plant.updated" | "plant.deleted")[];
            /**
             * Format: date-time
             * @description When the subscription was created
             */
            createdAt: string;
            /** @description `active`: each event it chose is announced to it; `disabled`: its pending deliveries reached WEBHOOK_MAX_PENDING, so new events are not (its pending ones still are). `POST /webhooks/{id}/enable` makes it active again and replays what it missed. */
            status: "active" | "disabled";
            /** @description Its deliveries pending now */
            pendingDeliveries: number;
            /**
             * Format: date-time
             * @description When it was disabled; only while disabled
             */
            disabledAt?: string;
            /**
             * Format: date-time
             * @description While disabled, or while what it missed is being replayed: when the first event it missed happened. Missed events it chose are replayed if within the last 7 days and their plant not deleted since (a plant.deleted is replayed).
             */
            missedSince?: string;
            /**
             * @description The Standard Webhooks signing key: `whsec_` and the base64 of 32 random bytes. Shown in this answer only; keep it to verify `webhook-signature`.
             * @example whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw+nQgnXsPGJk=
             */
            secret: string;
        };
        /**
         * @description One announcement of one event of a plant to one subscription, and where it stands.
         * @example {
         *       "id": "msg_2c7d9e1f3a5b4c6d8e0f1a2b3c4d5e6f",
         *       "event": "plant.created",
         *       "plantId": 7,
         *       "status": "pending",
         *       "attempts": 2,
         *       "lastStatusCode": 503,
         *       "nextAttemptAt": "2026-11-23T05:49:47.391Z",
         *       "createdAt": "2026-11-23T05:49:40.023Z"
         *     }
         * @example {
         *       "id": "msg_8b1e6f0d2c4a4f7e9d3b5a7c1e0f2d4b",
         *       "event": "plant.created",
         *       "plantId": 1,
         *       "status": "delivered",
         *       "attempts": 1,
         *       "lastStatusCode": 204,
         *       "createdAt": "2026-11-23T05:47:16.902Z",
         *       "deliveredAt": "2026-11-23T05:47:17.041Z"
         *     }
         */
        Delivery: {
            /**
             * @description Identification of the delivery: the `webhook-id` header of each of its attempts, by which a receiver deduplicates
             * @example msg_8b1e6f0d2c4a4f7e9d3b5a7c1e0f2d4b
             */
            id: string;
            /** @description `plant.created`: a plant was added; `plant.updated`: its name or tag changed; `plant.deleted`: it was deleted */
            event: "plant.created" | "plant.updated" | "plant.deleted";
            /**
             * Format: int64
             * @description The id of the plant announced
             */
            plantId: bigint;
            /** @description `pending`: waiting for its next attempt; `delivered`: a 2xx acknowledged it; `failed`: every attempt failed (POST …/retry starts it over) */
            status: "pending" | "delivered" | "failed";
            /** @description Attempts made so far */
            attempts: number;
            /** @description The HTTP status the last attempt was answered with */
            lastStatusCode?: number;
            /** @description Why the last attempt failed, when it got no acceptable answer: the kind of problem (a timeout, a refused connection, a host that resolves to an address that is not public, a TLS certificate not valid for the host…), never the receiver's addresses or certificate contents */
            lastError?: string;
            /**
             * Format: date-time
             * @description When the next attempt is due; only while pending
             */
            nextAttemptAt?: string;
            /**
             * Format: date-time
             * @description When the event happened: the plant was created, updated or deleted
             */
            createdAt: string;
            /**
             * Format: date-time
             * @description When a 2xx acknowledged it
             */
            deliveredAt?: string;
        };
        /**
         * @description A plant.updated event: the plant before and after an update that changed it.
         * @example {
         *       "type": "plant.updated",
         *       "id": 1,
         *       "old": {
         *         "name": "Monstera",
         *         "tag": "tropical"
         *       },
         *       "new": {
         *         "name": "Monstera deliciosa",
         *         "tag": "tropical"
         *       }
         *     }
         */
        PlantUpdated: {
            /** @enum {string} */
            type: "plant.updated";
            /**
             * Format: int64
             * @description The plant's id, an exact int64
             */
            id: bigint;
            old: components["schemas"]["Plant"];
            new: components["schemas"]["Plant"];
        };
        /**
         * @description A plant.deleted event: the id, name and tag of the plant deleted.
         * @example {
         *       "type": "plant.deleted",
         *       "id": 1,
         *       "name": "Monstera",
         *       "tag": "tropical"
         *     }
         */
        PlantDeleted: {
            /** @enum {string} */
            type: "plant.deleted";
            /**
             * Format: int64
             * @description The plant's id, an exact int64
             */
            id: bigint;
            /** @description The name it had */
            name: string;
            /** @description The tag it had, if any */
            tag?: string;
        };
        /**
         * @description One event of the change feed: a plant created, updated or deleted.
         * @example {
         *       "seq": 42,
         *       "type": "plant.created",
         *       "at": "2026-11-28T09:14:03.512Z",
         *       "id": 1,
         *       "data": {
         *         "id": 1,
         *         "name": "Monstera",
         *         "tag": "tropical"
         *       }
         *     }
         */
        Change: {
            /**
             * @description The event's place in the feed, ascending in the order the changes committed: the cursor to resume after, and its Server-Sent Events `id`
             * @example 42
             */
            seq: number;
            /** @description `plant.created`: a plant was added; `plant.updated`: its name or tag changed; `plant.deleted`: it was deleted */
            type: "plant.created" | "plant.updated" | "plant.deleted";
            /**
             * Format: date-time
             * @description When the change committed
             */
            at: string;
            /**
             * Format: int64
             * @description The id of the plant that changed, an exact int64
             */
            id: bigint;
            /** @description The event's body, byte for byte what a webhook subscription to it is sent: the NewPlant for plant.created, a PlantUpdated or a PlantDeleted. Absent when erased. */
            data?: components["schemas"]["NewPlant"] | components["schemas"]["PlantUpdated"] | components["schemas"]["PlantDeleted"];
            /**
             * @description Present when the plant was deleted since: the data of its earlier events is erased with it, and its plant.deleted event follows in the feed
             * @enum {boolean}
             */
            erased?: true;
        };
        /**
         * @description A page of the change feed.
         * @example {
         *       "changes": [
         *         {
         *           "seq": 42,
         *           "type": "plant.created",
         *           "at": "2026-11-28T09:14:03.512Z",
         *           "id": 1,
         *           "data": {
         *             "id": 1,
         *             "name": "Monstera",
         *             "tag": "tropical"
         *           }
         *         }
         *       ],
         *       "next": 42,
         *       "latest": 57
         *     }
         */
        ChangePage: {
            /** @description The events after the cursor, in commit order */
            changes: components["schemas"]["Change"][];
            /**
             * @description The cursor to pass as `after` next: the last event's seq, or the cursor given when there was none
             * @example 42
             */
            next: number;
            /**
             * @description The newest event's seq when the page was read: to follow only what happens from now on, start after it
             * @example 42
             */
            latest: number;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    liveness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Alive */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
            /** @description The request is not valid. Codes: `invalid_request`. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too slow. Codes: `request_timeout`. */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers too large. Codes: `headers_too_large`. */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error. Codes: `internal_error`. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Cannot serve now; nothing was stored. Codes: `shutting_down`. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    readiness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ready to serve */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
            /** @description The request is not valid. Codes: `invalid_request`. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too slow. Codes: `request_timeout`. */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers too large. Codes: `headers_too_large`. */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error. Codes: `internal_error`. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Cannot serve now; nothing was stored. Codes: `not_ready`, `shutting_down`. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    metrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Prometheus text exposition format 0.0.4 */
            200: {
                headers: {
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN) */
                    "RateLimit-Limit": number;
                    /** @description Requests this token has left in the current second; 0 on its 429 */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until this token's budget is full again */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /** @description The request is not valid. Codes: `unknown_parameter`, `invalid_request`. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No bearer token, or not one the service accepts; the answer carries a `WWW-Authenticate: Bearer` challenge. Codes: `token_missing`, `authorization_malformed`, `token_invalid`, `token_expired`. */
            401: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this operation needs; the answer carries `WWW-Authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`. Codes: `insufficient_scope`. */
            403: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too slow. Codes: `request_timeout`. */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests; retry after the `Retry-After` seconds. Codes: `rate_limited`, `auth_locked_out`. */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After": number;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN). Sent with `rate_limited` only */
                    "RateLimit-Limit"?: number;
                    /** @description Requests this token has left in the current second; 0 on its 429. Sent with `rate_limited` only */
                    "RateLimit-Remaining"?: number;
                    /** @description Seconds until this token's budget is full again. Sent with `rate_limited` only */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers too large. Codes: `headers_too_large`. */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error. Codes: `internal_error`. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Cannot serve now; nothing was stored. Codes: `overloaded`, `shutting_down`. */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. Sent with `overloaded` only */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listPlants: {
        parameters: {
            query?: {
                /**
                 * @description At most this many plants
                 * @example 10
                 */
                limit?: number;
                /**
                 * @description Only plants with a larger id: the cursor from the previous page's Link header
                 * @example 0
                 */
                after?: bigint;
                /**
                 * @description Only plants with exactly this tag
                 * @example tropical
                 */
                tag?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of plants, ascending by id */
            200: {
                headers: {
                    /** @description RFC 8288 link to the next page, present when more plants remain: `</plants?limit=100&after=42>; rel="next"` */
                    Link?: string;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN) */
                    "RateLimit-Limit": number;
                    /** @description Requests this token has left in the current second; 0 on its 429 */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until this token's budget is full again */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": 1,
                     *         "name": "Monstera",
                     *         "tag": "tropical"
                     *       },
                     *       {
                     *         "id": 7,
                     *         "name": "Calathea",
                     *         "tag": "tropical"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["StoredPlant"][];
                };
            };
            /** @description The request is not valid. Codes: `unknown_parameter`, `invalid_parameter`, `invalid_request`. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No bearer token, or not one the service accepts; the answer carries a `WWW-Authenticate: Bearer` challenge. Codes: `token_missing`, `authorization_malformed`, `token_invalid`, `token_expired`. */
            401: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this operation needs; the answer carries `WWW-Authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`. Codes: `insufficient_scope`. */
            403: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too slow. Codes: `request_timeout`. */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests; retry after the `Retry-After` seconds. Codes: `rate_limited`, `auth_locked_out`. */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After": number;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN). Sent with `rate_limited` only */
                    "RateLimit-Limit"?: number;
                    /** @description Requests this token has left in the current second; 0 on its 429. Sent with `rate_limited` only */
                    "RateLimit-Remaining"?: number;
                    /** @description Seconds until this token's budget is full again. Sent with `rate_limited` only */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers too large. Codes: `headers_too_large`. */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error. Codes: `internal_error`. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Cannot serve now; nothing was stored. Codes: `overloaded`, `shutting_down`, `store_unavailable`, `store_busy`. */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. Sent with `overloaded`, `store_unavailable`, `store_busy` only */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    addPlant: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description `*` is met (the collection exists); any other value never is: a 412, nothing written
                 * @example *
                 */
                "If-Match"?: string;
                /**
                 * @description `*` is never met (the collection exists): a 412, nothing written; a list of tags always is (the collection has none)
                 * @example "bOW8N2NaL5pMvtiOyZ3iGj"
                 */
                "If-None-Match"?: string;
                /**
                 * @description Not supported: plants keep no modification date. Without `If-Match` it is refused (400 `precondition_unsupported`) rather than ignored, so a write it was to guard never happens unconditionally; with `If-Match` it is ignored (RFC 9110 13.1.4)
                 * @example Sat, 28 Nov 2026 09:14:03 GMT
                 */
                "If-Unmodified-Since"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewPlant"];
            };
        };
        responses: {
            /** @description The plant as stored: its name and tag, never its id */
            200: {
                headers: {
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN) */
                    "RateLimit-Limit": number;
                    /** @description Requests this token has left in the current second; 0 on its 429 */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until this token's budget is full again */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Plant"];
                };
            };
            /** @description The request is not valid. Codes: `unknown_parameter`, `invalid_json`, `invalid_body`, `plant_rejected`, `precondition_unsupported`, `invalid_request`. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No bearer token, or not one the service accepts; the answer carries a `WWW-Authenticate: Bearer` challenge. Codes: `token_missing`, `authorization_malformed`, `token_invalid`, `token_expired`. */
            401: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this operation needs; the answer carries `WWW-Authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`. Codes: `insufficient_scope`. */
            403: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too slow. Codes: `request_timeout`. */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description In conflict with what the store holds. Codes: `plant_conflict`. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description undefined. Codes: `precondition_failed`. */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too large. Codes: `body_too_large`. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not JSON. Codes: `unsupported_media_type`. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests; retry after the `Retry-After` seconds. Codes: `rate_limited`, `auth_locked_out`. */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After": number;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN). Sent with `rate_limited` only */
                    "RateLimit-Limit"?: number;
                    /** @description Requests this token has left in the current second; 0 on its 429. Sent with `rate_limited` only */
                    "RateLimit-Remaining"?: number;
                    /** @description Seconds until this token's budget is full again. Sent with `rate_limited` only */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers too large. Codes: `headers_too_large`. */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error. Codes: `internal_error`. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Cannot serve now; nothing was stored. Codes: `overloaded`, `shutting_down`, `store_unavailable`, `store_busy`. */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. Sent with `overloaded`, `store_unavailable`, `store_busy` only */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPlant: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The `ETag` of the copy the client holds (a list of them, or `*`): while the plant is unchanged, the answer is a 304 without a body
                 * @example "bOW8N2NaL5pMvtiOyZ3iGj"
                 */
                "If-None-Match"?: string;
            };
            path: {
                /**
                 * @description Identification number of the plant, any signed 64-bit integer
                 * @example 1
                 */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The plant */
            200: {
                headers: {
                    /** @description Strong entity tag of the plant, changing whenever the plant does; send it in `If-None-Match` to revalidate: `"TG-sn9ffrhRIQH8Vnr-vVM"` */
                    ETag: string;
                    /** @description `private, no-cache`: a client may keep the plant, and revalidates it before each use */
                    "Cache-Control": string;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN) */
                    "RateLimit-Limit": number;
                    /** @description Requests this token has left in the current second; 0 on its 429 */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until this token's budget is full again */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoredPlant"];
                };
            };
            /** @description Not modified: the plant is still the one `If-None-Match` names */
            304: {
                headers: {
                    /** @description Strong entity tag of the plant, changing whenever the plant does; send it in `If-None-Match` to revalidate: `"TG-sn9ffrhRIQH8Vnr-vVM"` */
                    ETag: string;
                    /** @description `private, no-cache`: a client may keep the plant, and revalidates it before each use */
                    "Cache-Control": string;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN) */
                    "RateLimit-Limit": number;
                    /** @description Requests this token has left in the current second; 0 on its 429 */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until this token's budget is full again */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request is not valid. Codes: `unknown_parameter`, `invalid_path`, `invalid_parameter`, `invalid_request`. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No bearer token, or not one the service accepts; the answer carries a `WWW-Authenticate: Bearer` challenge. Codes: `token_missing`, `authorization_malformed`, `token_invalid`, `token_expired`. */
            401: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this operation needs; the answer carries `WWW-Authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`. Codes: `insufficient_scope`. */
            403: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found. Codes: `plant_not_found`. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too slow. Codes: `request_timeout`. */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests; retry after the `Retry-After` seconds. Codes: `rate_limited`, `auth_locked_out`. */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After": number;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN). Sent with `rate_limited` only */
                    "RateLimit-Limit"?: number;
                    /** @description Requests this token has left in the current second; 0 on its 429. Sent with `rate_limited` only */
                    "RateLimit-Remaining"?: number;
                    /** @description Seconds until this token's budget is full again. Sent with `rate_limited` only */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers too large. Codes: `headers_too_large`. */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error. Codes: `internal_error`. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Cannot serve now; nothing was stored. Codes: `overloaded`, `shutting_down`, `store_unavailable`, `store_busy`. */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. Sent with `overloaded`, `store_unavailable`, `store_busy` only */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updatePlant: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The `ETag` of the plant as the client read it (a list of them, compared strongly, or `*` for any existing plant): when the plant is no longer that one, the answer is a 412 and nothing is written. A weak or malformed entry matches nothing
                 * @example "TG-sn9ffrhRIQH8Vnr-vVM"
                 */
                "If-Match"?: string;
                /**
                 * @description An `ETag` the plant must not have (a list of them, compared weakly), or `*` (there must be no such plant, so a write of an existing one is a 412): when the plant has it, the answer is a 412 and nothing is written
                 * @example "bOW8N2NaL5pMvtiOyZ3iGj"
                 */
                "If-None-Match"?: string;
                /**
                 * @description Not supported: plants keep no modification date. Without `If-Match` it is refused (400 `precondition_unsupported`) rather than ignored, so a write it was to guard never happens unconditionally; with `If-Match` it is ignored (RFC 9110 13.1.4)
                 * @example Sat, 28 Nov 2026 09:14:03 GMT
                 */
                "If-Unmodified-Since"?: string;
            };
            path: {
                /**
                 * @description Identification number of the plant, any signed 64-bit integer
                 * @example 1
                 */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PlantUpdate"];
            };
        };
        responses: {
            /** @description The plant as stored now, as GET answers it */
            200: {
                headers: {
                    /** @description Strong entity tag of the plant, changing whenever the plant does; send it in `If-None-Match` to revalidate: `"TG-sn9ffrhRIQH8Vnr-vVM"` */
                    ETag: string;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN) */
                    "RateLimit-Limit": number;
                    /** @description Requests this token has left in the current second; 0 on its 429 */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until this token's budget is full again */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoredPlant"];
                };
            };
            /** @description The request is not valid. Codes: `unknown_parameter`, `invalid_path`, `invalid_parameter`, `invalid_json`, `invalid_body`, `plant_rejected`, `precondition_unsupported`, `invalid_request`. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No bearer token, or not one the service accepts; the answer carries a `WWW-Authenticate: Bearer` challenge. Codes: `token_missing`, `authorization_malformed`, `token_invalid`, `token_expired`. */
            401: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this operation needs; the answer carries `WWW-Authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`. Codes: `insufficient_scope`. */
            403: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found. Codes: `plant_not_found`. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too slow. Codes: `request_timeout`. */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description undefined. Codes: `precondition_failed`. */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too large. Codes: `body_too_large`. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not JSON. Codes: `unsupported_media_type`. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests; retry after the `Retry-After` seconds. Codes: `rate_limited`, `auth_locked_out`. */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After": number;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN). Sent with `rate_limited` only */
                    "RateLimit-Limit"?: number;
                    /** @description Requests this token has left in the current second; 0 on its 429. Sent with `rate_limited` only */
                    "RateLimit-Remaining"?: number;
                    /** @description Seconds until this token's budget is full again. Sent with `rate_limited` only */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers too large. Codes: `headers_too_large`. */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error. Codes: `internal_error`. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Cannot serve now; nothing was stored. Codes: `overloaded`, `shutting_down`, `store_unavailable`, `store_busy`. */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. Sent with `overloaded`, `store_unavailable`, `store_busy` only */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deletePlant: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The `ETag` of the plant as the client read it (a list of them, compared strongly, or `*` for any existing plant): when the plant is no longer that one, the answer is a 412 and nothing is written. A weak or malformed entry matches nothing
                 * @example "TG-sn9ffrhRIQH8Vnr-vVM"
                 */
                "If-Match"?: string;
                /**
                 * @description An `ETag` the plant must not have (a list of them, compared weakly), or `*` (there must be no such plant, so a write of an existing one is a 412): when the plant has it, the answer is a 412 and nothing is written
                 * @example "bOW8N2NaL5pMvtiOyZ3iGj"
                 */
                "If-None-Match"?: string;
                /**
                 * @description Not supported: plants keep no modification date. Without `If-Match` it is refused (400 `precondition_unsupported`) rather than ignored, so a write it was to guard never happens unconditionally; with `If-Match` it is ignored (RFC 9110 13.1.4)
                 * @example Sat, 28 Nov 2026 09:14:03 GMT
                 */
                "If-Unmodified-Since"?: string;
            };
            path: {
                /**
                 * @description Identification number of the plant, any signed 64-bit integer
                 * @example 1
                 */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN) */
                    "RateLimit-Limit": number;
                    /** @description Requests this token has left in the current second; 0 on its 429 */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until this token's budget is full again */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request is not valid. Codes: `unknown_parameter`, `invalid_path`, `invalid_parameter`, `precondition_unsupported`, `invalid_request`. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No bearer token, or not one the service accepts; the answer carries a `WWW-Authenticate: Bearer` challenge. Codes: `token_missing`, `authorization_malformed`, `token_invalid`, `token_expired`. */
            401: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this operation needs; the answer carries `WWW-Authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`. Codes: `insufficient_scope`. */
            403: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found. Codes: `plant_not_found`. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too slow. Codes: `request_timeout`. */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description undefined. Codes: `precondition_failed`. */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests; retry after the `Retry-After` seconds. Codes: `rate_limited`, `auth_locked_out`. */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After": number;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN). Sent with `rate_limited` only */
                    "RateLimit-Limit"?: number;
                    /** @description Requests this token has left in the current second; 0 on its 429. Sent with `rate_limited` only */
                    "RateLimit-Remaining"?: number;
                    /** @description Seconds until this token's budget is full again. Sent with `rate_limited` only */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers too large. Codes: `headers_too_large`. */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error. Codes: `internal_error`. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Cannot serve now; nothing was stored. Codes: `overloaded`, `shutting_down`, `store_unavailable`, `store_busy`. */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. Sent with `overloaded`, `store_unavailable`, `store_busy` only */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listChanges: {
        parameters: {
            query?: {
                /**
                 * @description Only events after this cursor (a `seq`, or a page's `next`); from the oldest kept (at least 7 days) when left out. `Last-Event-ID` takes its place for a stream.
                 * @example 0
                 */
                after?: number;
                /**
                 * @description At most this many events
                 * @example 100
                 */
                limit?: number;
                /**
                 * @description When no event follows the cursor: wait up to this many seconds for one (a long poll) before answering an empty page. At most 30.
                 * @example 0
                 */
                wait?: number;
            };
            header?: {
                /**
                 * @description For a stream: the `id` of the last event received, as an EventSource sends it when it reconnects; it takes the place of `after`, and like it is at most 9007199254740991 (2^53 - 1)
                 * @example 0
                 */
                "last-event-id"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the feed (JSON), or a stream of its events (`text/event-stream`) */
            200: {
                headers: {
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN) */
                    "RateLimit-Limit": number;
                    /** @description Requests this token has left in the current second; 0 on its 429 */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until this token's budget is full again */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChangePage"];
                    "text/event-stream": string;
                };
            };
            /** @description The request is not valid. Codes: `unknown_parameter`, `invalid_parameter`, `invalid_request`. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No bearer token, or not one the service accepts; the answer carries a `WWW-Authenticate: Bearer` challenge. Codes: `token_missing`, `authorization_malformed`, `token_invalid`, `token_expired`. */
            401: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this operation needs; the answer carries `WWW-Authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`. Codes: `insufficient_scope`. */
            403: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too slow. Codes: `request_timeout`. */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No longer available. Codes: `cursor_expired`. */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests; retry after the `Retry-After` seconds. Codes: `rate_limited`, `auth_locked_out`, `too_many_readers`. */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After": number;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN). Sent with `rate_limited` only */
                    "RateLimit-Limit"?: number;
                    /** @description Requests this token has left in the current second; 0 on its 429. Sent with `rate_limited` only */
                    "RateLimit-Remaining"?: number;
                    /** @description Seconds until this token's budget is full again. Sent with `rate_limited` only */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers too large. Codes: `headers_too_large`. */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error. Codes: `internal_error`. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Cannot serve now; nothing was stored. Codes: `overloaded`, `shutting_down`, `store_unavailable`, `store_busy`. */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. Sent with `overloaded`, `store_unavailable`, `store_busy` only */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listSubscriptions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every subscription */
            200: {
                headers: {
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN) */
                    "RateLimit-Limit": number;
                    /** @description Requests this token has left in the current second; 0 on its 429 */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until this token's budget is full again */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17",
                     *         "url": "https://example.com/plant-hooks",
                     *         "events": [
                     *           "plant.created"
                     *         ],
                     *         "createdAt": "2026-11-23T05:45:31.512Z",
                     *         "status": "active",
                     *         "pendingDeliveries": 0
                     *       },
                     *       {
                     *         "id": "wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17",
                     *         "url": "https://example.com/plant-hooks",
                     *         "events": [
                     *           "plant.created"
                     *         ],
                     *         "createdAt": "2026-11-23T05:45:31.512Z",
                     *         "status": "disabled",
                     *         "pendingDeliveries": 10000,
                     *         "disabledAt": "2026-11-24T02:10:09.317Z",
                     *         "missedSince": "2026-11-24T02:10:09.317Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["Subscription"][];
                };
            };
            /** @description The request is not valid. Codes: `unknown_parameter`, `invalid_request`. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No bearer token, or not one the service accepts; the answer carries a `WWW-Authenticate: Bearer` challenge. Codes: `token_missing`, `authorization_malformed`, `token_invalid`, `token_expired`. */
            401: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this operation needs; the answer carries `WWW-Authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`. Codes: `insufficient_scope`. */
            403: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too slow. Codes: `request_timeout`. */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests; retry after the `Retry-After` seconds. Codes: `rate_limited`, `auth_locked_out`. */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After": number;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN). Sent with `rate_limited` only */
                    "RateLimit-Limit"?: number;
                    /** @description Requests this token has left in the current second; 0 on its 429. Sent with `rate_limited` only */
                    "RateLimit-Remaining"?: number;
                    /** @description Seconds until this token's budget is full again. Sent with `rate_limited` only */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers too large. Codes: `headers_too_large`. */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error. Codes: `internal_error`. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Cannot serve now; nothing was stored. Codes: `overloaded`, `shutting_down`, `store_unavailable`, `store_busy`. */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. Sent with `overloaded`, `store_unavailable`, `store_busy` only */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    subscribe: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description Makes a retry safe (draft-ietf-httpapi-idempotency-key-header-07): a Structured Field string, quoted (`"8e03978e-40d5-43e8-bc93-6894a57f9324"`; a UUID is a good key), or the same characters bare, if they are letters, digits and `.-_~:+/=`. Kept 24 hours per token: the same key with the same body answers the original answer again, status, subscription and secret, and creates nothing; with another body, a 422; while the first request is still running, a 409. A request that failed releases its key. At most 1000 keys per token at once
                 * @example "8e03978e-40d5-43e8-bc93-6894a57f9324"
                 */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewSubscription"];
            };
        };
        responses: {
            /** @description Subscribed. The `Location` header holds the subscription's address. */
            201: {
                headers: {
                    /** @description The subscription's address, `/webhooks/{id}`: `/webhooks/wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17` */
                    Location: string;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN) */
                    "RateLimit-Limit": number;
                    /** @description Requests this token has left in the current second; 0 on its 429 */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until this token's budget is full again */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CreatedSubscription"];
                };
            };
            /** @description The request is not valid. Codes: `unknown_parameter`, `invalid_json`, `invalid_body`, `webhook_url_refused`, `idempotency_key_invalid`, `invalid_request`. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No bearer token, or not one the service accepts; the answer carries a `WWW-Authenticate: Bearer` challenge. Codes: `token_missing`, `authorization_malformed`, `token_invalid`, `token_expired`. */
            401: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this operation needs; the answer carries `WWW-Authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`. Codes: `insufficient_scope`. */
            403: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too slow. Codes: `request_timeout`. */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description In conflict with what the store holds. Codes: `subscription_limit`, `idempotency_key_in_use`. */
            409: {
                headers: {
                    /** @description Seconds to wait before trying again. Sent with `idempotency_key_in_use` only */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No longer available. Codes: `subscription_deleted`. */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too large. Codes: `body_too_large`. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not JSON. Codes: `unsupported_media_type`. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not the request this `Idempotency-Key` was first used for. Codes: `idempotency_key_reused`. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests; retry after the `Retry-After` seconds. Codes: `rate_limited`, `auth_locked_out`, `idempotency_keys_exhausted`. */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After": number;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN). Sent with `rate_limited` only */
                    "RateLimit-Limit"?: number;
                    /** @description Requests this token has left in the current second; 0 on its 429. Sent with `rate_limited` only */
                    "RateLimit-Remaining"?: number;
                    /** @description Seconds until this token's budget is full again. Sent with `rate_limited` only */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers too large. Codes: `headers_too_large`. */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error. Codes: `internal_error`. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Cannot serve now; nothing was stored. Codes: `overloaded`, `shutting_down`, `store_unavailable`, `store_busy`. */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. Sent with `overloaded`, `store_unavailable`, `store_busy` only */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getSubscription: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Identification of the subscription
                 * @example wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17
                 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The subscription, without its secret */
            200: {
                headers: {
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN) */
                    "RateLimit-Limit": number;
                    /** @description Requests this token has left in the current second; 0 on its 429 */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until this token's budget is full again */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Subscription"];
                };
            };
            /** @description The request is not valid. Codes: `unknown_parameter`, `invalid_path`, `invalid_parameter`, `invalid_request`. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No bearer token, or not one the service accepts; the answer carries a `WWW-Authenticate: Bearer` challenge. Codes: `token_missing`, `authorization_malformed`, `token_invalid`, `token_expired`. */
            401: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this operation needs; the answer carries `WWW-Authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`. Codes: `insufficient_scope`. */
            403: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found. Codes: `webhook_not_found`. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too slow. Codes: `request_timeout`. */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests; retry after the `Retry-After` seconds. Codes: `rate_limited`, `auth_locked_out`. */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After": number;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN). Sent with `rate_limited` only */
                    "RateLimit-Limit"?: number;
                    /** @description Requests this token has left in the current second; 0 on its 429. Sent with `rate_limited` only */
                    "RateLimit-Remaining"?: number;
                    /** @description Seconds until this token's budget is full again. Sent with `rate_limited` only */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers too large. Codes: `headers_too_large`. */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error. Codes: `internal_error`. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Cannot serve now; nothing was stored. Codes: `overloaded`, `shutting_down`, `store_unavailable`, `store_busy`. */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. Sent with `overloaded`, `store_unavailable`, `store_busy` only */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    unsubscribe: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Identification of the subscription
                 * @example wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17
                 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN) */
                    "RateLimit-Limit": number;
                    /** @description Requests this token has left in the current second; 0 on its 429 */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until this token's budget is full again */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request is not valid. Codes: `unknown_parameter`, `invalid_path`, `invalid_parameter`, `invalid_request`. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No bearer token, or not one the service accepts; the answer carries a `WWW-Authenticate: Bearer` challenge. Codes: `token_missing`, `authorization_malformed`, `token_invalid`, `token_expired`. */
            401: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this operation needs; the answer carries `WWW-Authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`. Codes: `insufficient_scope`. */
            403: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found. Codes: `webhook_not_found`. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too slow. Codes: `request_timeout`. */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests; retry after the `Retry-After` seconds. Codes: `rate_limited`, `auth_locked_out`. */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After": number;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN). Sent with `rate_limited` only */
                    "RateLimit-Limit"?: number;
                    /** @description Requests this token has left in the current second; 0 on its 429. Sent with `rate_limited` only */
                    "RateLimit-Remaining"?: number;
                    /** @description Seconds until this token's budget is full again. Sent with `rate_limited` only */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers too large. Codes: `headers_too_large`. */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error. Codes: `internal_error`. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Cannot serve now; nothing was stored. Codes: `overloaded`, `shutting_down`, `store_unavailable`, `store_busy`. */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. Sent with `overloaded`, `store_unavailable`, `store_busy` only */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listDeliveries: {
        parameters: {
            query?: {
                /**
                 * @description At most this many deliveries
                 * @example 20
                 */
                limit?: number;
                /**
                 * @description Only deliveries older than this cursor: take it from the previous page's Link header
                 * @example 42
                 */
                before?: number;
            };
            header?: never;
            path: {
                /**
                 * @description Identification of the subscription
                 * @example wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17
                 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of deliveries, newest first */
            200: {
                headers: {
                    /** @description RFC 8288 link to the next page, present when more deliveries remain: `</webhooks/wh_…/deliveries?limit=20&before=42>; rel="next"` */
                    Link?: string;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN) */
                    "RateLimit-Limit": number;
                    /** @description Requests this token has left in the current second; 0 on its 429 */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until this token's budget is full again */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "msg_2c7d9e1f3a5b4c6d8e0f1a2b3c4d5e6f",
                     *         "event": "plant.created",
                     *         "plantId": 7,
                     *         "status": "pending",
                     *         "attempts": 2,
                     *         "lastStatusCode": 503,
                     *         "nextAttemptAt": "2026-11-23T05:49:47.391Z",
                     *         "createdAt": "2026-11-23T05:49:40.023Z"
                     *       },
                     *       {
                     *         "id": "msg_8b1e6f0d2c4a4f7e9d3b5a7c1e0f2d4b",
                     *         "event": "plant.created",
                     *         "plantId": 1,
                     *         "status": "delivered",
                     *         "attempts": 1,
                     *         "lastStatusCode": 204,
                     *         "createdAt": "2026-11-23T05:47:16.902Z",
                     *         "deliveredAt": "2026-11-23T05:47:17.041Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["Delivery"][];
                };
            };
            /** @description The request is not valid. Codes: `unknown_parameter`, `invalid_path`, `invalid_parameter`, `invalid_request`. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No bearer token, or not one the service accepts; the answer carries a `WWW-Authenticate: Bearer` challenge. Codes: `token_missing`, `authorization_malformed`, `token_invalid`, `token_expired`. */
            401: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this operation needs; the answer carries `WWW-Authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`. Codes: `insufficient_scope`. */
            403: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found. Codes: `webhook_not_found`. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too slow. Codes: `request_timeout`. */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests; retry after the `Retry-After` seconds. Codes: `rate_limited`, `auth_locked_out`. */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After": number;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN). Sent with `rate_limited` only */
                    "RateLimit-Limit"?: number;
                    /** @description Requests this token has left in the current second; 0 on its 429. Sent with `rate_limited` only */
                    "RateLimit-Remaining"?: number;
                    /** @description Seconds until this token's budget is full again. Sent with `rate_limited` only */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers too large. Codes: `headers_too_large`. */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error. Codes: `internal_error`. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Cannot serve now; nothing was stored. Codes: `overloaded`, `shutting_down`, `store_unavailable`, `store_busy`. */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. Sent with `overloaded`, `store_unavailable`, `store_busy` only */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    retryDelivery: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Identification of the subscription
                 * @example wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17
                 */
                id: string;
                /**
                 * @description Identification of the delivery: the `webhook-id` header of each of its attempts, by which a receiver deduplicates
                 * @example msg_8b1e6f0d2c4a4f7e9d3b5a7c1e0f2d4b
                 */
                deliveryId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Accepted: the delivery is pending; follow it in the delivery log */
            202: {
                headers: {
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN) */
                    "RateLimit-Limit": number;
                    /** @description Requests this token has left in the current second; 0 on its 429 */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until this token's budget is full again */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request is not valid. Codes: `unknown_parameter`, `invalid_path`, `invalid_parameter`, `invalid_json`, `invalid_request`. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No bearer token, or not one the service accepts; the answer carries a `WWW-Authenticate: Bearer` challenge. Codes: `token_missing`, `authorization_malformed`, `token_invalid`, `token_expired`. */
            401: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this operation needs; the answer carries `WWW-Authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`. Codes: `insufficient_scope`. */
            403: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found. Codes: `webhook_not_found`, `delivery_not_found`. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too slow. Codes: `request_timeout`. */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description In conflict with what the store holds. Codes: `delivery_pending`, `plant_deleted`. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too large. Codes: `body_too_large`. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not JSON. Codes: `unsupported_media_type`. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests; retry after the `Retry-After` seconds. Codes: `rate_limited`, `auth_locked_out`. */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After": number;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN). Sent with `rate_limited` only */
                    "RateLimit-Limit"?: number;
                    /** @description Requests this token has left in the current second; 0 on its 429. Sent with `rate_limited` only */
                    "RateLimit-Remaining"?: number;
                    /** @description Seconds until this token's budget is full again. Sent with `rate_limited` only */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers too large. Codes: `headers_too_large`. */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error. Codes: `internal_error`. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Cannot serve now; nothing was stored. Codes: `overloaded`, `shutting_down`, `store_unavailable`, `store_busy`. */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. Sent with `overloaded`, `store_unavailable`, `store_busy` only */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    enableSubscription: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Identification of the subscription
                 * @example wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17
                 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Accepted: the subscription is active; what it missed is being queued (`missedSince` is shown until all of it is) */
            202: {
                headers: {
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN) */
                    "RateLimit-Limit": number;
                    /** @description Requests this token has left in the current second; 0 on its 429 */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until this token's budget is full again */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request is not valid. Codes: `unknown_parameter`, `invalid_path`, `invalid_parameter`, `invalid_json`, `invalid_request`. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No bearer token, or not one the service accepts; the answer carries a `WWW-Authenticate: Bearer` challenge. Codes: `token_missing`, `authorization_malformed`, `token_invalid`, `token_expired`. */
            401: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this operation needs; the answer carries `WWW-Authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`. Codes: `insufficient_scope`. */
            403: {
                headers: {
                    /** @description The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found. Codes: `webhook_not_found`. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too slow. Codes: `request_timeout`. */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too large. Codes: `body_too_large`. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not JSON. Codes: `unsupported_media_type`. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests; retry after the `Retry-After` seconds. Codes: `rate_limited`, `auth_locked_out`. */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After": number;
                    /** @description Requests this token may make a second (RATE_LIMIT_PER_TOKEN). Sent with `rate_limited` only */
                    "RateLimit-Limit"?: number;
                    /** @description Requests this token has left in the current second; 0 on its 429. Sent with `rate_limited` only */
                    "RateLimit-Remaining"?: number;
                    /** @description Seconds until this token's budget is full again. Sent with `rate_limited` only */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers too large. Codes: `headers_too_large`. */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error. Codes: `internal_error`. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Cannot serve now; nothing was stored. Codes: `overloaded`, `shutting_down`, `store_unavailable`, `store_busy`. */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. Sent with `overloaded`, `store_unavailable`, `store_busy` only */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    plantWebhook: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description The delivery's id: one per event and subscription, the same on every attempt.
                 * @example msg_8b1e6f0d2c4a4f7e9d3b5a7c1e0f2d4b
                 */
                "webhook-id": string;
                /**
                 * @description When this attempt was sent, in seconds since the epoch: refuse one too far from your clock to stop replays.
                 * @example 1795412837
                 */
                "webhook-timestamp": string;
                /**
                 * @description `v1,` and the base64 HMAC-SHA256, under the secret's key, of `<webhook-id>.<webhook-timestamp>.<body>`.
                 * @example v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=
                 */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewPlant"];
            };
        };
        responses: {
            /** @description Acknowledged (any 2xx is) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    plantUpdatedWebhook: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description The delivery's id: one per event and subscription, the same on every attempt.
                 * @example msg_8b1e6f0d2c4a4f7e9d3b5a7c1e0f2d4b
                 */
                "webhook-id": string;
                /**
                 * @description When this attempt was sent, in seconds since the epoch: refuse one too far from your clock to stop replays.
                 * @example 1795412837
                 */
                "webhook-timestamp": string;
                /**
                 * @description `v1,` and the base64 HMAC-SHA256, under the secret's key, of `<webhook-id>.<webhook-timestamp>.<body>`.
                 * @example v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=
                 */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PlantUpdated"];
            };
        };
        responses: {
            /** @description Acknowledged (any 2xx is) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    plantDeletedWebhook: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description The delivery's id: one per event and subscription, the same on every attempt.
                 * @example msg_8b1e6f0d2c4a4f7e9d3b5a7c1e0f2d4b
                 */
                "webhook-id": string;
                /**
                 * @description When this attempt was sent, in seconds since the epoch: refuse one too far from your clock to stop replays.
                 * @example 1795412837
                 */
                "webhook-timestamp": string;
                /**
                 * @description `v1,` and the base64 HMAC-SHA256, under the secret's key, of `<webhook-id>.<webhook-timestamp>.<body>`.
                 * @example v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=
                 */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PlantDeleted"];
            };
        };
        responses: {
            /** @description Acknowledged (any 2xx is) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}

/** The properties the contract types as int64: the client reads their JSON integers as bigint. */
export const int64Properties: ReadonlySet<string> = new Set(["id", "plantId"]);
