package org.pageio.posix;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Arrays;

/**
 * Builds downcall handles to glibc functions. Package-private; used only from static
 * initialisers, so every handle is made once. Thread-safe.
 */
final class Libc {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LOOKUP = LINKER.defaultLookup();
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private Libc() { }

    /**
     * A handle to {@code name}. If this libc lacks the symbol, the handle throws
     * {@link UnsupportedOperationException} when called, so that one missing function does not
     * make the whole package unusable.
     */
    @SuppressWarnings("restricted") // the descriptors in this package match glibc's prototypes
    static MethodHandle function(String name, FunctionDescriptor descriptor, Linker.Option... options) {
        return LOOKUP.find(name)
                .map(symbol -> LINKER.downcallHandle(symbol, descriptor, options))
                .orElseGet(() -> missing(name, LINKER.downcallHandle(descriptor, options).type()));
    }

    /**
     * Like {@link #function}, with errno captured: the handle takes a {@link CallState#segment()}
     * as its first argument.
     */
    static MethodHandle errnoFunction(String name, FunctionDescriptor descriptor, Linker.Option... options) {
        Linker.Option[] all = Arrays.copyOf(options, options.length + 1);
        all[options.length] = CAPTURE_ERRNO;
        return function(name, descriptor, all);
    }

    /**
     * Rethrows what a downcall threw. Correctly typed downcalls throw only unchecked exceptions
     * (closed arena, wrong thread) and errors, so anything else is a bug in this package.
     */
    static RuntimeException unchecked(Throwable t) {
        if (t instanceof RuntimeException e) {
            return e;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new AssertionError("downcall threw a checked exception", t);
    }

    private static MethodHandle missing(String name, MethodType unboundType) {
        MethodType type = unboundType.dropParameterTypes(0, 1); // the symbol address
        MethodHandle thrower = MethodHandles.throwException(type.returnType(), UnsupportedOperationException.class)
                .bindTo(new UnsupportedOperationException("this libc does not export " + name));
        return MethodHandles.dropArguments(thrower, 0, type.parameterList());
    }
}
