/**
 * OkHttp integration: {@link dev.redeye.http.okhttp.RedeyeInterceptor}. Needs {@code com.squareup.okhttp3:okhttp}
 * 5.x on the classpath (redeye-http declares it optional, so only OkHttp users have it).
 */
package dev.redeye.http.okhttp;
