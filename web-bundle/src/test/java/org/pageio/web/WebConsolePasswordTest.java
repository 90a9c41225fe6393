package org.pageio.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;

import org.junit.jupiter.api.Test;

class WebConsolePasswordTest {

    private final SecureRandom random = new SecureRandom();

    @Test
    void generatedPasswordsAreLongAndDistinct() {
        String a = WebConsolePassword.generate(random);
        String b = WebConsolePassword.generate(random);
        assertTrue(a.length() >= 20, a);
        assertTrue(a.chars().allMatch(c -> WebConsolePassword.ALPHABET.indexOf(c) >= 0), a);
        assertFalse(a.equals(b));
    }

    @Test
    void hashMatchesOnlyItsPassword() {
        String hash = WebConsolePassword.hash("s3cret-password", random);
        assertTrue(hash.startsWith("{sha-256}"), hash);
        assertTrue(WebConsolePassword.matches(hash, "s3cret-password"));
        assertFalse(WebConsolePassword.matches(hash, "admin"));
        assertFalse(WebConsolePassword.matches("s3cret-password", "s3cret-password"));
        assertFalse(WebConsolePassword.matches(null, "x"));
        assertFalse(WebConsolePassword.matches(WebConsolePassword.UNUSABLE, "unusable"));
    }

    /** Cross-check against the Web Console's own (package-private) Password class. */
    @Test
    void webConsoleAcceptsOurHashAndRejectsEverythingForUnusable() throws Exception {
        Class<?> pw = Class.forName("org.apache.felix.webconsole.internal.servlet.Password");
        Constructor<?> ctor = pw.getDeclaredConstructor(String.class);
        ctor.setAccessible(true);
        Method matches = pw.getDeclaredMethod("matches", byte[].class);
        matches.setAccessible(true);
        Method isHashed = pw.getDeclaredMethod("isPasswordHashed", String.class);
        isHashed.setAccessible(true);

        String password = WebConsolePassword.generate(random);
        String hash = WebConsolePassword.hash(password, random);
        assertEquals(true, isHashed.invoke(null, hash));
        Object ours = ctor.newInstance(hash);
        assertEquals(true, matches.invoke(ours, (Object) password.getBytes(StandardCharsets.UTF_8)));
        assertEquals(false, matches.invoke(ours, (Object) "admin".getBytes(StandardCharsets.UTF_8)));

        assertEquals(true, isHashed.invoke(null, WebConsolePassword.UNUSABLE));
        Object locked = ctor.newInstance(WebConsolePassword.UNUSABLE);
        for (String attempt : new String[] {"admin", "unusable", "", "{sha-256}unusable", password}) {
            assertEquals(false, matches.invoke(locked, (Object) attempt.getBytes(StandardCharsets.UTF_8)), attempt);
        }

        // and the console's own hashes verify with ours
        Method consoleHash = pw.getDeclaredMethod("hashPassword", String.class);
        consoleHash.setAccessible(true);
        assertTrue(WebConsolePassword.matches(consoleHash.invoke(null, password), password));
    }
}
