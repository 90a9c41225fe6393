package org.pageio.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.util.List;

import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.junit.jupiter.api.Test;

class CommandArgumentsTest {

    /** A command in the shape of pageio's: options, a flag, a session, positional arguments. */
    public static final class Sample {
        public String set(
                @Parameter(names = {"-f", "--format"}, absentValue = "text") String format,
                @Descriptor("setting, e.g. effective_io_concurrency") String name,
                @Descriptor("value (with a unit)") String value) {
            return name + "=" + value;
        }

        public String show(
                CommandSession session,
                @Parameter(names = {"-a", "--all"}, presentValue = "true", absentValue = "false") boolean all,
                @Parameter(names = {"--rows"}, absentValue = "") String rows) {
            return "";
        }

        public String show(@Descriptor("setting to show") String name) {
            return name;
        }

        public String scan(@Descriptor("kind: count, bitmap") String kind, @Descriptor("its arguments") String... rest) {
            return kind + rest.length;
        }
    }

    static List<Method> methods(String function) {
        return CommandArguments.methodsNamed(Sample.class, function);
    }

    @Test
    void gogosRefusalIsRecognisedAndNothingElse() {
        assertTrue(CommandArguments.isMismatch(new IllegalArgumentException(
                "Cannot coerce stat_io(Token) to any of [(boolean, String, String, String)]")));
        assertFalse(CommandArguments.isMismatch(new IllegalArgumentException("--rows takes a whole number")));
        assertFalse(CommandArguments.isMismatch(new IllegalStateException("Cannot coerce x")));
    }

    @Test
    void wordsDropQuotesAndKeepQuotedSpaces() {
        assertEquals(List.of("pageio:set", "log_min_messages", "a b", "c"),
                CommandArguments.words("  pageio:set log_min_messages 'a b'  \"c\""));
        assertEquals(List.of("x", ""), CommandArguments.words("x ''"));
    }

    @Test
    void anUnknownOptionIsNamedWithTheOptionsThereAre() {
        assertEquals("unknown option --bogus; its options: -f/--format; help pageio:set describes them",
                CommandArguments.explain("pageio:set", List.of("--bogus", "a", "b"), methods("set")));
        assertEquals("unknown option -x; its options: --rows; flags: -a/--all; help pageio:show describes them",
                CommandArguments.explain("pageio:show", List.of("-x"), methods("show")));
    }

    @Test
    void anOptionWithoutItsValueIsNamed() {
        assertEquals("option --format needs a value; help pageio:set describes them",
                CommandArguments.explain("pageio:set", List.of("a", "b", "--format"), methods("set")));
    }

    @Test
    void theWrongNumberOfArgumentsNamesTheArgumentsOfEachForm() {
        assertEquals("takes 2 arguments (setting, value), got 0; help pageio:set describes them",
                CommandArguments.explain("pageio:set", List.of(), methods("set")));
        assertEquals("takes 0 arguments or 1 argument (setting to show), got 2; help pageio:show describes them",
                CommandArguments.explain("pageio:show", List.of("--all", "a", "b"), methods("show")));
        // a negative number is an argument, not an option
        assertEquals("takes 2 arguments (setting, value), got 3; help pageio:set describes them",
                CommandArguments.explain("pageio:set", List.of("-f", "json", "a", "-1", "-2.5"), methods("set")));
    }

    @Test
    void aLastArgumentThatTakesTheRestCountsAsAnyNumber() {
        assertEquals("takes 1 or more arguments (kind, its arguments), got 0; help pageio:scan describes them",
                CommandArguments.explain("pageio:scan", List.of(), methods("scan")));
        assertEquals("an argument does not fit the type its option or position takes: count a b c;"
                + " help pageio:scan describes them",
                CommandArguments.explain("pageio:scan", List.of("count", "a", "b", "c"), methods("scan")));
    }

    @Test
    void argumentsThatCountRightButStillDoNotFitAreShown() {
        assertEquals("an argument does not fit the type its option or position takes: -f json a b;"
                + " help pageio:set describes them",
                CommandArguments.explain("pageio:set", List.of("-f", "json", "a", "b"), methods("set")));
    }

    @Test
    void helpIsAskedForOnlyWhenTheCommandHasNoSuchOption() {
        assertTrue(CommandArguments.asksForHelp(List.of("--help"), methods("set")));
        assertTrue(CommandArguments.asksForHelp(List.of("a", "-h"), methods("show")));
        assertFalse(CommandArguments.asksForHelp(List.of("--helpful"), methods("set")));
        assertFalse(CommandArguments.asksForHelp(List.of("help"), methods("set")));
    }

    @Test
    void aDescriptorIsShortenedToItsFirstWords() {
        assertEquals("setting", CommandArguments.shortName("setting, e.g. effective_io_concurrency, io_method"));
        assertEquals("value", CommandArguments.shortName("value (with a unit)"));
        assertEquals("the name of the", CommandArguments.shortName("the name of the table to scan"));
    }
}
