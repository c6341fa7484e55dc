package dev.redeye.store.dynamodb;

import dev.redeye.api.OperationNames;
import dev.redeye.api.StoreException;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;

/**
 * Turns the SDK's exceptions into {@link StoreException}s whose message says what failed and what to do:
 * a missing table names the exact {@code aws dynamodb create-table} command; throttling, timeouts and an
 * unreachable endpoint say so. Messages name the table and the operation (abbreviated), never credentials.
 */
final class Errors {
    private Errors() {
    }

    static StoreException wrap(String call, String name, String table, SdkException e) {
        String what = "DynamoDB " + call + (name == null ? "" : " of '" + OperationNames.abbreviate(name) + "'")
                + " on table " + table;
        if (e instanceof ResourceNotFoundException) {
            return new StoreException(what + " failed: " + missingTable(table), e);
        }
        if (e instanceof ApiCallTimeoutException || e instanceof ApiCallAttemptTimeoutException) {
            return new StoreException(what + " timed out (" + e.getMessage() + ")", e);
        }
        if (e instanceof AwsServiceException) {
            AwsServiceException ase = (AwsServiceException) e;
            String code = ase.awsErrorDetails() == null ? null : ase.awsErrorDetails().errorCode();
            String message = ase.awsErrorDetails() == null ? ase.getMessage() : ase.awsErrorDetails().errorMessage();
            if (ase.isThrottlingException()) {
                return new StoreException(what + " was throttled after the client's retries (" + code + ": "
                        + message + "); raise the table's capacity or use on-demand billing", e);
            }
            return new StoreException(what + " failed: " + code + ": " + message + " [HTTP " + ase.statusCode()
                    + "]", e);
        }
        if (e instanceof SdkClientException) {
            return new StoreException(what + " failed: cannot reach DynamoDB (" + e.getMessage() + ")", e);
        }
        return new StoreException(what + " failed: " + e, e);
    }

    /** The message for a table that does not exist, with the commands that create it. */
    static String missingTable(String table) {
        return "table '" + table + "' does not exist. Create it (on-demand billing, key 'pk' of type S) with\n"
                + "  " + createTableCommand(table) + "\n"
                + "and, for garbage collection of old items (optional),\n"
                + "  aws dynamodb update-time-to-live --table-name " + table
                + " --time-to-live-specification Enabled=true,AttributeName=" + Items.GC + "\n"
                + "or let the store create it: createTable(true), or createTable=true in the URI";
    }

    /** The AWS CLI command that creates the table this store expects. */
    static String createTableCommand(String table) {
        return "aws dynamodb create-table --table-name " + table
                + " --attribute-definitions AttributeName=" + Items.PK + ",AttributeType=S"
                + " --key-schema AttributeName=" + Items.PK + ",KeyType=HASH"
                + " --billing-mode PAY_PER_REQUEST";
    }
}
