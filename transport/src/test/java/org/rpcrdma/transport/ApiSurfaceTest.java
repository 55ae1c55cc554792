package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** What users of the transport can reach: the API packages, no protocol internals. */
class ApiSurfaceTest {
    /** The API: endpoints and calls, and the XDR / ONC RPC headers the typed layer's users write. */
    private static final Set<String> EXPORTED = Set.of("org.rpcrdma.transport", "org.rpcrdma.xdr");
    /** The codec serves the NFSv4.1 client's back-channel sizing; nothing else leaves the module. */
    private static final Map<String, Set<String>> QUALIFIED = Map.of(
            "org.rpcrdma.transport.wire", Set.of("org.rpcrdma.nfs4"));

    /** The public types of the API package: what users name. Everything else is in an internal package. */
    private static final Set<String> API_TYPES = Set.of("Backchannel", "BackchannelNotEnabledException",
            "BidirectionalCaller", "CallHandler", "CallOptions", "CallTimeoutException", "ChunksUnavailableException",
            "Connection", "ConnectionLostException", "DdpArgument", "InMemoryPair", "IncomingCall", "LinkClosedException",
            "MalformedReplyException", "NativeFailureException", "Rdma", "RdmaErrorException", "ReceivedMessage",
            "RegisteredBuffer", "RegisteredBuffers", "ReplyCallback", "ReplyReader", "ReplyRefusedException", "RpcCaller",
            "RpcRdmaClient", "RpcRdmaException", "RpcRdmaOptions", "RpcRdmaServer", "RpcRdmaStats");

    /** A connection is a facade: what a user calls, nothing the engine needs (that is its ConnectionEngine's). */
    private static final Set<String> CONNECTION_METHODS = Set.of("abandonedCalls()", "call(MemorySegment,CallOptions)",
            "call(MemorySegment,CallOptions,ReplyCallback)", "callAndRead(MemorySegment,CallOptions,ReplyReader)",
            "callAndWait(MemorySegment,CallOptions)", "clientId()", "close()", "close(long,TimeUnit)", "connection()",
            "enableBackchannel(CallHandler)", "heldReceives()", "isClient()", "isOpen()", "markBackchannelReady()",
            "maxReplyBytes()", "outstandingCalls()", "ownCallHighWater()", "ownCallWindow()", "peerCallHighWater()",
            "peerOutstandingCalls()", "postedReceives()", "rdmaDepth()", "receiveInlineThreshold()", "remoteAddress()",
            "remoteInvalidation()", "sendInlineThreshold()", "serveBackwardCalls(CallHandler)", "stats()", "toString()",
            "waitingCalls()");

    @Test
    void theApiPackageHoldsOnlyTypesUsersName() throws Exception {
        Set<String> found = new TreeSet<>();
        for (Class<?> c : apiClasses()) {
            if (c.getPackageName().equals("org.rpcrdma.transport") && c.getEnclosingClass() == null) {
                found.add(c.getSimpleName());
            }
        }
        assertEquals(new TreeSet<>(API_TYPES), found, "public types of org.rpcrdma.transport");
    }

    @Test
    void aConnectionIsAFacadeOfUserMethodsOnly() {
        Set<String> found = new TreeSet<>();
        for (Method m : Connection.class.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers()) && !m.isSynthetic() && !m.isBridge()) {
                found.add(m.getName() + "(" + String.join(",", Arrays.stream(m.getParameterTypes())
                        .map(Class::getSimpleName).toList()) + ")");
            }
        }
        assertEquals(new TreeSet<>(CONNECTION_METHODS), found, "public methods of Connection");
        assertEquals(List.of(), Arrays.stream(Connection.class.getConstructors()).map(Object::toString).toList(),
                "public constructors of Connection");
    }

    /** Each option's name: an accessor on the options, a setter of the same name on their builder. */
    private static final Set<String> OPTIONS = Set.of("backchannelWaitMillis", "backwardCallLimit", "backwardChunks",
            "backwardCredits", "busyPoll", "callTimeoutMillis", "chunkMemoryBytes", "completionThreads", "connectTimeoutMillis",
            "credits",
            "inlineThreshold", "maxChunkBytes", "maxChunkSegments", "memoryWindows", "pollSpinMicros", "rdmaDepth",
            "receiveBatch", "reconnectAttempts", "registrationCacheBytes", "remoteInvalidation", "shareClientThreads", "sharedReceives",
            "signalEvery", "silenceTimeoutMillis");

    /** Options are made one way, through the builder (an option added later breaks no caller). */
    @Test
    void optionsAreMadeOnlyThroughTheirBuilder() {
        Set<String> expected = new TreeSet<>(OPTIONS);
        expected.addAll(Set.of("builder", "defaults", "equals", "hashCode", "toBuilder", "toString"));
        assertEquals(expected, publicMethodNames(RpcRdmaOptions.class), "public methods of RpcRdmaOptions");
        Set<String> setters = new TreeSet<>(OPTIONS);
        setters.add("build");
        assertEquals(setters, publicMethodNames(RpcRdmaOptions.Builder.class), "public methods of its Builder");
        assertEquals(0, RpcRdmaOptions.class.getConstructors().length, "public constructors of RpcRdmaOptions");
    }

    private static Set<String> publicMethodNames(Class<?> c) {
        Set<String> names = new TreeSet<>();
        for (Method m : c.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers()) && !m.isSynthetic()) {
                names.add(m.getName());
            }
        }
        return names;
    }

    @Test
    void aConnectionPublishesNoProtocolNumbersOfItsOwn() {
        // the backchannel control program is the transport's business between our own ends
        List<String> constants = Arrays.stream(Connection.class.getFields())
                .filter(f -> Modifier.isStatic(f.getModifiers())).map(Field::getName).toList();
        assertEquals(List.of(), constants, "public static fields of Connection");
    }

    @Test
    void theModuleExportsTheApiAndQualifiesTheRest() throws IOException, URISyntaxException {
        ModuleDescriptor d;
        try (InputStream in = Files.newInputStream(classes().resolve("module-info.class"))) {
            d = ModuleDescriptor.read(in);
        }
        Set<String> unqualified = new TreeSet<>();
        Map<String, Set<String>> qualified = new TreeMap<>();
        for (ModuleDescriptor.Exports e : d.exports()) {
            if (e.isQualified()) {
                qualified.put(e.source(), new TreeSet<>(e.targets()));
            } else {
                unqualified.add(e.source());
            }
        }
        assertEquals(new TreeSet<>(EXPORTED), unqualified, "unqualified exports of " + d.name());
        assertEquals(new TreeMap<>(QUALIFIED), qualified, "qualified exports of " + d.name());
        assertEquals(Set.of(), d.opens(), "opened packages of " + d.name());
    }

    @Test
    void publicSignaturesOfTheApiNameOnlyApiTypes() throws Exception {
        // a type of an internal package in a public signature is unusable by the caller
        // (or forces that package to be exported): every org.rpcrdma type reachable from a
        // public member of an exported package is itself in an exported package
        List<Class<?>> api = apiClasses();
        assertTrue(api.contains(Connection.class) && api.contains(org.rpcrdma.xdr.XdrReader.class), "API classes found: " + api);
        List<String> leaks = new ArrayList<>();
        for (Class<?> c : api) {
            List<Type> types = new ArrayList<>();
            types.add(c.getGenericSuperclass());
            types.addAll(List.of(c.getGenericInterfaces()));
            for (Field f : c.getDeclaredFields()) {
                if (visible(c, f)) {
                    types.add(f.getGenericType());
                }
            }
            List<Executable> members = new ArrayList<>(List.of(c.getDeclaredConstructors()));
            members.addAll(List.of(c.getDeclaredMethods()));
            for (Executable m : members) {
                if (!visible(c, m) || m.isSynthetic()) {
                    continue;
                }
                types.addAll(List.of(m.getGenericParameterTypes()));
                types.addAll(List.of(m.getGenericExceptionTypes()));
                if (m instanceof Method method) {
                    types.add(method.getGenericReturnType());
                }
            }
            for (Type t : types) {
                internalTypes(t, new TreeSet<>()).forEach(n -> leaks.add(c.getName() + " -> " + n));
            }
        }
        assertEquals(List.of(), leaks.stream().distinct().sorted().toList(), "internal types in the public API");
    }

    private static Path classes() throws URISyntaxException {
        return Path.of(Connection.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    private static List<Class<?>> apiClasses() throws Exception {
        Path root = classes();
        List<Class<?>> out = new ArrayList<>();
        for (String pkg : EXPORTED) {
            try (Stream<Path> files = Files.list(root.resolve(pkg.replace('.', '/')))) {
                for (Path p : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                    String simple = p.getFileName().toString().replace(".class", "");
                    if (simple.equals("package-info")) {
                        continue;
                    }
                    Class<?> c = Class.forName(pkg + "." + simple, false, ApiSurfaceTest.class.getClassLoader());
                    if (reachable(c)) {
                        out.add(c);
                    }
                }
            }
        }
        return out;
    }

    /** Public, and public all the way out (a public nested class of a package-private one is not API). */
    private static boolean reachable(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getDeclaringClass()) {
            if (!Modifier.isPublic(k.getModifiers()) || k.isAnonymousClass() || k.isLocalClass()) {
                return false;
            }
        }
        return true;
    }

    private static boolean visible(Class<?> owner, Member m) {
        int mod = m.getModifiers();
        return Modifier.isPublic(mod) || (Modifier.isProtected(mod) && !Modifier.isFinal(owner.getModifiers())
                && !owner.isSealed());
    }

    private static Set<String> internalTypes(Type t, Set<String> acc) {
        switch (t) {
            case null -> { }
            case Class<?> c -> {
                Class<?> e = c;
                while (e.isArray()) {
                    e = e.getComponentType();
                }
                String pkg = e.getPackageName();
                if (pkg.startsWith("org.rpcrdma.") && !EXPORTED.contains(pkg)) {
                    acc.add(e.getName());
                }
            }
            case ParameterizedType p -> {
                internalTypes(p.getRawType(), acc);
                Arrays.stream(p.getActualTypeArguments()).forEach(a -> internalTypes(a, acc));
            }
            case GenericArrayType g -> internalTypes(g.getGenericComponentType(), acc);
            case WildcardType w -> {
                Arrays.stream(w.getUpperBounds()).forEach(b -> internalTypes(b, acc));
                Arrays.stream(w.getLowerBounds()).forEach(b -> internalTypes(b, acc));
            }
            case TypeVariable<?> v -> { }
            default -> { }
        }
        return acc;
    }
}
