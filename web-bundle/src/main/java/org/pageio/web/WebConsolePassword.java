package org.pageio.web;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/**
 * Passwords for the Felix Web Console: generation, and the hashed form its {@code OsgiManager}
 * accepts in the {@code password} configuration property.
 *
 * <p>Web Console 5.0.18 ({@code org.apache.felix.webconsole.internal.servlet.Password}) treats a
 * value {@code {alg}rest} as hashed. When {@code rest} is {@code salt-iterations-base64} it
 * compares {@code base64(digest^iterations(utf8(salt + password)))}, where each round digests the
 * previous round's bytes. It stores a hashed value as is; a plain value is re-hashed by the
 * console itself through ConfigAdmin, so giving it the hash keeps the plain password out of the
 * configuration store altogether.
 */
public final class WebConsolePassword {

    /** At least 20 characters, as the operator is told; 24 from 62 symbols is ~143 bits. */
    public static final int LENGTH = 24;
    static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    static final String ALGORITHM = "sha-256";
    static final int ITERATIONS = 1000;
    static final int SALT_BYTES = 8;

    /**
     * A value for the framework property {@code felix.webconsole.password} that no password matches:
     * it claims to be a SHA-256 hash without salt, but is too short to equal any encoded digest.
     * The console uses it until our configuration arrives, so {@code admin/admin} never works.
     */
    public static final String UNUSABLE = "{sha-256}unusable";

    private WebConsolePassword() {
    }

    /** A fresh random password of {@link #LENGTH} letters and digits. */
    public static String generate(SecureRandom random) {
        StringBuilder sb = new StringBuilder(LENGTH);
        for (int i = 0; i < LENGTH; i++) {
            sb.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
        }
        return sb.toString();
    }

    /** {@code {sha-256}<16 hex salt>-1000-<base64>}, the console's own salted format. */
    public static String hash(String password, SecureRandom random) {
        byte[] salt = new byte[SALT_BYTES];
        random.nextBytes(salt);
        return hash(password, HexFormat.of().formatHex(salt), ITERATIONS);
    }

    static String hash(String password, String salt, int iterations) {
        return "{" + ALGORITHM + "}" + salt + "-" + iterations + "-" + digest(salt + password, iterations);
    }

    /**
     * Whether {@code hashed} (in the format {@link #hash} writes) is the hash of {@code password}.
     * Anything else, including a plain value, is "no": the caller then writes a new hash.
     */
    public static boolean matches(Object hashed, String password) {
        if (!(hashed instanceof String h) || !h.startsWith("{" + ALGORITHM + "}")) {
            return false;
        }
        String rest = h.substring(ALGORITHM.length() + 2);
        String[] parts = rest.split("-", 3);
        if (parts.length != 3) {
            return false;
        }
        int iterations;
        try {
            iterations = Integer.parseInt(parts[1]);
        } catch (NumberFormatException e) {
            return false;
        }
        if (iterations < 1 || iterations > 1_000_000) {
            return false;
        }
        byte[] expected = hash(password, parts[0], iterations).getBytes(StandardCharsets.UTF_8);
        return MessageDigest.isEqual(expected, h.getBytes(StandardCharsets.UTF_8));
    }

    private static String digest(String data, int iterations) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] bytes = data.getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < iterations; i++) {
                md.reset();
                bytes = md.digest(bytes);
            }
            return Base64.getEncoder().encodeToString(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }
}
